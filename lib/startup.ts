import { getConfig } from "@/lib/config/env";
import { gatehouse } from "@/lib/auth/gatehouse";
import { getDatabase } from "@/lib/db/client";

/** Validates configuration and opens (and migrates) the database; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    getConfig();
    await getDatabase();
    // Builds every protection layer now, so a bad limit or proxy setting stops the start.
    await gatehouse();
  } catch (error) {
    console.error(`Gatehouse cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
