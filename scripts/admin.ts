// npm run admin -- [--as <operator>] <command> [arguments]: the operator's commands
// (lib/ops/admin.ts), against the database and configuration the instance uses (its env file).
// On the embedded database a running instance is asked through its admin socket
// (lib/ops/admin-channel.ts), so nothing has to stop; with none running, or on PostgreSQL, the
// command opens the database itself. Exit code 1 on any refusal.
import { AdminError } from "@/lib/ops/admin";
import { askRunningInstance } from "@/lib/ops/admin-channel";
import { parseAdminArgs, runAdminRequest } from "@/lib/ops/admin-request";
import { getConfig } from "@/lib/config/env";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse } from "@/lib/gatehouse";
import { runCommand } from "./command";

async function main(argv: string[]): Promise<string> {
  const request = parseAdminArgs(argv);
  const config = getConfig();
  const target = config.database.target;
  const live = target.kind === "pglite" ? await askRunningInstance(target.dataDir, request) : null;
  const reply =
    live ??
    (await (async () => {
      const gate = await createGatehouse(config, await openDatabase(target));
      try {
        return await runAdminRequest(gate, request, "offline");
      } finally {
        await gate.close();
      }
    })());
  if (!reply.ok) throw new AdminError(reply.message);
  return reply.message;
}

runCommand(() => main(process.argv.slice(2)), AdminError);
