import { freshPglite } from "../helpers/databases";
import { registrationSuite } from "./register.suite";

registrationSuite("embedded PGlite", freshPglite);
