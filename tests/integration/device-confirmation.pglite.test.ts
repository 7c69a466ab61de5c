import { freshPglite } from "../helpers/databases";
import { deviceConfirmationSuite } from "./device-confirmation.suite";

deviceConfirmationSuite("embedded PGlite", freshPglite);
