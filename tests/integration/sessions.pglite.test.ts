import { freshPglite } from "../helpers/databases";
import { sessionsSuite } from "./sessions.suite";

sessionsSuite("embedded PGlite", freshPglite);
