import { freshPglite } from "../helpers/databases";
import { crowdShapes } from "./attack-shapes.crowd.suite";

crowdShapes("embedded PGlite, memory limiter", freshPglite);
