import { freshPglite } from "../helpers/databases";
import { webhooksSuite } from "./webhooks.suite";

webhooksSuite("embedded PGlite", freshPglite);
