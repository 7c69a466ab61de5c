import { freshPglite } from "../helpers/databases";
import { recoverySuite } from "./recovery.suite";

recoverySuite("embedded PGlite", freshPglite);
