import { freshPglite } from "../helpers/databases";
import { knownDevicesSuite } from "./known-devices.suite";

knownDevicesSuite("embedded PGlite", freshPglite);
