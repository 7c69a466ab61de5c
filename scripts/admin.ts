// npm run admin -- <command> [arguments]: the operator's commands (lib/ops/admin.ts), against
// the database and configuration the instance uses (its env file). Exit code 1 on any refusal.
import { ADMIN_COMMANDS, AdminError, usage } from "@/lib/ops/admin";
import { getConfig } from "@/lib/config/env";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse } from "@/lib/gatehouse";
import { runCommand } from "./command";

async function main([name, ...args]: string[]): Promise<string> {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new AdminError(usage());
  const config = getConfig();
  const gate = await createGatehouse(config, await openDatabase(config.database.target));
  try {
    return await command.run({ gate, prisma: gate.prisma }, args);
  } finally {
    await gate.close();
  }
}

runCommand(() => main(process.argv.slice(2)), AdminError);
