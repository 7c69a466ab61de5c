import { freshPglite } from "../helpers/databases";
import { accountDeleteSuite } from "./account-delete.suite";

accountDeleteSuite("embedded PGlite", freshPglite);
