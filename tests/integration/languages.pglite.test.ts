import { freshPglite } from "../helpers/databases";
import { languageSuite } from "./languages.suite";

languageSuite("embedded PGlite", freshPglite);
