import { getConfig } from "@/lib/config/env";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import { FAST_PATH_SYMBOL } from "@/lib/http/refusal-cache";
import { remember } from "@/lib/remember";

export type { Gatehouse } from "@/lib/gatehouse";

/** The name the app's instance is remembered under (tests put their own instance there). */
export const APP_GATEHOUSE = "gatehouse";

/** This process's Gatehouse, built on first use from the environment's configuration. */
export function gatehouse(): Promise<Gatehouse> {
  return remember(APP_GATEHOUSE, async () => {
    const config = getConfig();
    const database = await openDatabase(config.database.target, { minFreeBytes: config.database.minFreeBytes });
    try {
      return serve(await createGatehouse(config, database));
    } catch (error) {
      await database.close();
      throw error;
    }
  });
}

/** Makes `gate` the one server.mjs's fast path asks before it hands a request to Next.js. */
export function serve(gate: Gatehouse): Gatehouse {
  (globalThis as Record<symbol, unknown>)[FAST_PATH_SYMBOL] = gate.refusals;
  return gate;
}
