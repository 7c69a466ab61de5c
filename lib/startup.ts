import { gatehouse } from "@/lib/auth/gatehouse";
import { publishLifecycle } from "@/lib/lifecycle/lifecycle";
import { startRetention } from "@/lib/retention/job";

/** Validates configuration, opens (and migrates) the database and builds every layer; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    const gate = await gatehouse();
    const retention = startRetention(gate.prisma, gate.config, gate.clock, gate.log);
    // server.mjs calls close() once the last in-flight request has been answered.
    publishLifecycle(
      {
        shutdownGraceMs: gate.config.http.shutdownGraceMs,
        shutdownDelayMs: gate.config.http.shutdownDelayMs,
        firstByteTimeoutMs: gate.config.http.socketFirstByteTimeoutMs,
      },
      async () => {
        await retention.stop();
        await gate.close();
      },
    );
  } catch (error) {
    console.error(`Gatehouse cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
