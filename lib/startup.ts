import { getConfig } from "@/lib/config/env";
import { getDatabase } from "@/lib/db/client";

/** Validates configuration and opens (and migrates) the database; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    getConfig();
    await getDatabase();
  } catch (error) {
    console.error(`Gatehouse cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
