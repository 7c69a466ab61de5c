// npm run db:backup -- <file> | npm run db:restore -- <file> | npm run db:check: the embedded database's backups
// (lib/ops/backup.ts). A clear message and exit code 1 on any refusal; never a half-restored folder.
import { BackupError, backupPglite, checkPglite, resolveBackupFile, restorePglite } from "@/lib/ops/backup";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { runCommand } from "./command";

async function main(command: string | undefined, fileArg: string | undefined): Promise<string> {
  const target = resolveDatabaseTarget(process.env.DATABASE_URL);
  if (target.kind !== "pglite") {
    throw new BackupError("DATABASE_URL names a PostgreSQL server: back it up with pg_dump and restore with pg_restore.");
  }
  if (command === "check") {
    const { migrations } = await checkPglite(target.dataDir);
    return `Checked ${target.dataDir} (${migrations} migrations): amcheck found every table and index sound.`;
  }
  const file = resolveBackupFile(fileArg);
  if (command === "backup") {
    const { bytes, migrations } = await backupPglite(target.dataDir, file);
    return `Backed up ${target.dataDir} (${migrations} migrations) to ${file}: ${(bytes / 1024).toFixed(0)} KiB.`;
  }
  if (command === "restore") {
    const { replacedFolder, migrations } = await restorePglite(file, target.dataDir);
    return `Restored ${file} (${migrations} migrations) into ${target.dataDir}.${replacedFolder ? ` The folder it replaced is kept at ${replacedFolder}.` : ""}`;
  }
  throw new BackupError("usage: tsx scripts/db.ts backup|restore <file> | check");
}

runCommand(() => main(process.argv[2], process.argv[3]), BackupError);
