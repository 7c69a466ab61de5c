// npm run instance -- new <client> [--url https://…] [--port N] [--data <folder>] [--dir <folder>] [brand options]:
// writes a new client's env file with fresh secrets and its brand (lib/ops/instance.ts). On a
// terminal it asks for each brand variable no option gave; --no-input (or no terminal) takes the
// defaults. Exit code 1 on any refusal, an existing instance included: nothing is overwritten.
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import {
  BRAND_QUESTIONS,
  brandVariables,
  createInstance,
  defaultBrandName,
  InstanceError,
  readLogo,
  validateClientName,
  type BrandAnswers,
} from "@/lib/ops/instance";
import { leanStartCommand } from "@/lib/server-contract.mjs";
import { runCommand } from "./command";
import { messageOf } from "@/lib/log/message";

const USAGE = [
  "usage: npm run instance -- new <client> [options]",
  "  --url <https://…>   the instance's public address (NEXTAUTH_URL); default https://<client>.example.com, a placeholder to edit",
  "  --port <n>          the port it listens on; default the next one after the other instances' (from 3101)",
  "  --data <folder>     its data folder (embedded database, mail outbox); default <dir>/<client>/data",
  "  --dir <folder>      where instance folders are created; default instances",
  "  --brand-name <name>       BRAND_NAME; default the client's name, capitalised",
  "  --brand-logo <file>       an SVG or PNG (at most 100 kB), copied into the instance folder as BRAND_LOGO",
  "  --brand-color <#rrggbb>   BRAND_COLOR, refused unless it is readable in the light and dark themes",
  "  --support <url|email>     SUPPORT_URL (https://…) or SUPPORT_EMAIL",
  "  --privacy-url <https://…> PRIVACY_URL        --terms-url <https://…> TERMS_URL",
  "  --no-input                ask nothing: unset brand options keep their defaults (also when not on a terminal)",
].join("\n");

/** Asks each brand question no option answered, again until the answer is accepted. */
async function ask(client: string, given: BrandAnswers): Promise<BrandAnswers> {
  const answers: BrandAnswers = { ...given };
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (const { key, question } of BRAND_QUESTIONS) {
      if (answers[key] !== undefined) continue;
      const fallback = key === "name" ? defaultBrandName(client) : "";
      for (;;) {
        const answer = (await terminal.question(`${question}${fallback ? ` [${fallback}]` : ""}: `)).trim();
        try {
          if (key === "logo" && answer) readLogo(answer);
          brandVariables({ ...answers, [key]: answer }, client);
          answers[key] = answer;
          break;
        } catch (error) {
          if (!(error instanceof InstanceError)) throw error;
          console.log(`  ${error.message}`);
        }
      }
    }
  } finally {
    terminal.close();
  }
  return answers;
}

async function main(): Promise<string> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        url: { type: "string" },
        port: { type: "string" },
        data: { type: "string" },
        dir: { type: "string" },
        "no-input": { type: "boolean" },
        "brand-name": { type: "string" },
        "brand-logo": { type: "string" },
        "brand-color": { type: "string" },
        support: { type: "string" },
        "privacy-url": { type: "string" },
        "terms-url": { type: "string" },
      },
    });
  } catch (error) {
    throw new InstanceError(`${messageOf(error)}\n${USAGE}`);
  }
  const [command, client, ...rest] = parsed.positionals;
  if (command !== "new" || rest.length > 0) throw new InstanceError(USAGE);
  const { values } = parsed;
  const given: BrandAnswers = {
    name: values["brand-name"],
    logo: values["brand-logo"],
    color: values["brand-color"],
    support: values.support,
    privacyUrl: values["privacy-url"],
    termsUrl: values["terms-url"],
  };
  const interactive = process.stdin.isTTY && !values["no-input"];
  const brand = interactive ? await ask(validateClientName(client), given) : given;
  const { envFile, settings } = createInstance({
    baseDir: values.dir ?? "instances",
    client,
    url: values.url,
    port: values.port,
    dataDir: values.data,
    brand,
  });
  return [
    `Created instance "${settings.client}": ${envFile}`,
    `  data folder ${settings.dataDir}, port ${settings.port}, public URL ${settings.url}`,
    `  brand ${settings.brand.BRAND_NAME}${settings.brand.BRAND_COLOR ? `, colour ${settings.brand.BRAND_COLOR}` : ""}${settings.brand.BRAND_LOGO ? `, logo ${settings.brand.BRAND_LOGO}` : ""}`,
    ...(settings.placeholderUrl ? [`  NEXTAUTH_URL is a placeholder: edit it in ${envFile} (or start over with --url).`] : []),
    `Start it from the packaged server folder: ${leanStartCommand([`--env-file=${path.resolve(envFile)}`])}`,
  ].join("\n");
}

runCommand(main, InstanceError);
