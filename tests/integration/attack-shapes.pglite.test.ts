import { freshPglite } from "../helpers/databases";
import { attackShapeSuite } from "./attack-shapes.suite";

attackShapeSuite("embedded PGlite", freshPglite);
