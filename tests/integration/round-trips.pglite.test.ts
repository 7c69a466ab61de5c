import { freshPglite } from "../helpers/databases";
import { roundTripsSuite } from "./round-trips.suite";

roundTripsSuite("embedded PGlite", freshPglite);
