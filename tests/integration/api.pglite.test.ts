import { freshPglite } from "../helpers/databases";
import { apiSuite } from "./api.suite";

apiSuite("embedded PGlite", freshPglite);
