// npm run admin -- <command> [arguments]: the operator's commands (lib/admin/commands.ts), against
// the database and configuration the instance uses (its env file). Exit code 1 on any refusal.
import { ADMIN_COMMANDS, AdminError, usage } from "@/lib/admin/commands";
import { gatehouse } from "@/lib/auth/gatehouse";
import { getDatabase } from "@/lib/db/client";
import { runCommand } from "./command";

async function main([name, ...args]: string[]): Promise<string> {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new AdminError(usage());
  const database = await getDatabase();
  const gate = await gatehouse();
  try {
    return await command.run({ gate, prisma: database.prisma }, args);
  } finally {
    await gate.close();
    await database.close();
  }
}

runCommand(() => main(process.argv.slice(2)), AdminError);
