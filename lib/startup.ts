import { getConfig } from "@/lib/config/env";
import { gatehouse } from "@/lib/auth/gatehouse";
import { getDatabase } from "@/lib/db/client";
import { publishLifecycle } from "@/lib/lifecycle/lifecycle";
import { startRetention } from "@/lib/retention/job";

/** Validates configuration and opens (and migrates) the database; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    const config = getConfig();
    const database = await getDatabase();
    // Builds every protection layer now, so a bad limit or proxy setting stops the start.
    const gate = await gatehouse();
    const retention = startRetention(database.prisma, config, gate.clock);
    // server.mjs calls close() once the last in-flight request has been answered.
    publishLifecycle(config.SHUTDOWN_GRACE_MS, async () => {
      await retention.stop();
      await gate.close();
      await database.close();
    });
  } catch (error) {
    console.error(`Gatehouse cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
