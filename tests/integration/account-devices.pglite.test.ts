import { freshPglite } from "../helpers/databases";
import { accountDevicesSuite } from "./account-devices.suite";

accountDevicesSuite("embedded PGlite", freshPglite);
