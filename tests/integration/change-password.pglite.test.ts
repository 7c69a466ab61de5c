import { freshPglite } from "../helpers/databases";
import { changePasswordSuite } from "./change-password.suite";

changePasswordSuite("embedded PGlite", freshPglite);
