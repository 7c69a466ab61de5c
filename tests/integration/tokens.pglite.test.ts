import { freshPglite } from "../helpers/databases";
import { tokenSuite } from "./tokens.suite";

tokenSuite("embedded PGlite", freshPglite);
