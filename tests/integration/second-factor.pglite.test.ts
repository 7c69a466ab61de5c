import { freshPglite } from "../helpers/databases";
import { secondFactorSuite } from "./second-factor.suite";

secondFactorSuite("embedded PGlite", freshPglite);
