import { freshPglite } from "../helpers/databases";
import { storeWritesSuite } from "./store-writes.suite";

storeWritesSuite("embedded PGlite", freshPglite);
