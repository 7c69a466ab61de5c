// npm run instance -- new <client> [--url https://…] [--port N] [--data <folder>] [--dir <folder>]:
// writes a new client's env file with fresh secrets (lib/instance/instance.ts). Exit code 1 on any
// refusal, an existing instance included: nothing is overwritten.
import path from "node:path";
import { parseArgs } from "node:util";
import { createInstance, InstanceError } from "@/lib/instance/instance";
import { runCommand } from "./command";

const USAGE = [
  "usage: npm run instance -- new <client> [options]",
  "  --url <https://…>   the instance's public address (NEXTAUTH_URL); default https://<client>.example.com, a placeholder to edit",
  "  --port <n>          the port it listens on; default the next one after the other instances' (from 3101)",
  "  --data <folder>     its data folder (embedded database, mail outbox); default <dir>/<client>/data",
  "  --dir <folder>      where instance folders are created; default instances",
].join("\n");

async function main(): Promise<string> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { url: { type: "string" }, port: { type: "string" }, data: { type: "string" }, dir: { type: "string" } },
    });
  } catch (error) {
    throw new InstanceError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const [command, client, ...rest] = parsed.positionals;
  if (command !== "new" || rest.length > 0) throw new InstanceError(USAGE);
  const { values } = parsed;
  const { envFile, settings } = createInstance({
    baseDir: values.dir ?? "instances",
    client,
    url: values.url,
    port: values.port,
    dataDir: values.data,
  });
  return [
    `Created instance "${settings.client}": ${envFile}`,
    `  data folder ${settings.dataDir}, port ${settings.port}, public URL ${settings.url}`,
    ...(settings.placeholderUrl ? [`  NEXTAUTH_URL is a placeholder: edit it in ${envFile} (or start over with --url).`] : []),
    `Start it from the packaged server folder: node --env-file=${path.resolve(envFile)} server.mjs`,
  ].join("\n");
}

runCommand(main, InstanceError);
