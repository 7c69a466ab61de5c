import { freshPglite } from "../helpers/databases";
import { lockoutSuite } from "./lockout.suite";

lockoutSuite("embedded PGlite", freshPglite);
