import { freshPglite } from "../helpers/databases";
import { passkeysSuite } from "./passkeys.suite";

passkeysSuite("embedded PGlite", freshPglite);
