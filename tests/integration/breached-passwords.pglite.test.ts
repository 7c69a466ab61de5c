import { freshPglite } from "../helpers/databases";
import { breachedPasswordsSuite } from "./breached-passwords.suite";

breachedPasswordsSuite("embedded PGlite", freshPglite);
