import { freshPglite } from "../helpers/databases";
import { accountDataSuite } from "./account-data.suite";

accountDataSuite("embedded PGlite", freshPglite);
