import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { checkLogo } from "@/lib/brand/logo";
import { brandProblems } from "@/lib/config/env";

/**
 * One client's instance: an env file with its own secrets, port and data folder
 * (`npm run instance -- new <client>`). The server reads nothing else: `node --env-file`,
 * systemd's EnvironmentFile= and compose's env_file all take this file as it is.
 */
export class InstanceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InstanceError";
  }
}

export const ENV_FILE_NAME = "gatehouse.env";
export const FIRST_PORT = 3101;

// Also a folder name, a systemd instance name (gatehouse@<client>) and a compose project name:
// lower-case letters, digits and inner hyphens only, so it can never climb out of its folder.
const CLIENT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export function validateClientName(name: string | undefined): string {
  if (!name || !CLIENT_NAME.test(name)) {
    throw new InstanceError(
      `Client name ${JSON.stringify(name ?? "")}: use 1 to 40 lower-case letters, digits and inner hyphens (for example acme or acme-staging).`,
    );
  }
  return name;
}

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** https://, or http:// on this machine for a local trial (then session cookies cannot be Secure). */
export function validatePublicUrl(value: string): { url: string; insecureLocal: boolean } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InstanceError(
      `--url ${JSON.stringify(value)}: not a URL; give the instance's public address, for example https://acme.example.com`,
    );
  }
  if (url.protocol === "https:") return { url: url.origin, insecureLocal: false };
  if (url.protocol === "http:" && LOOPBACK_HOSTS.includes(url.hostname)) return { url: url.origin, insecureLocal: true };
  throw new InstanceError(`--url ${value}: must be https:// (session cookies are Secure), or http:// on localhost for a local trial.`);
}

/** 32 random bytes, base64url: 43 characters, above every 32-character minimum in lib/config/env.ts. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The brand variables an instance is made with (`--brand-name`, … or the questions); unset ones keep their defaults. */
export type BrandAnswers = {
  name?: string | undefined;
  /** A file to copy into the instance folder (an SVG or PNG, checked as the server checks it). */
  logo?: string | undefined;
  color?: string | undefined;
  /** A support page's https:// URL, or an email address. */
  support?: string | undefined;
  privacyUrl?: string | undefined;
  termsUrl?: string | undefined;
};

/** What `npm run instance` asks, in order: the answer's key, the question, and the variable it sets. */
export const BRAND_QUESTIONS = [
  { key: "name", question: "Brand name (page titles, header, mail)", variable: "BRAND_NAME" },
  { key: "logo", question: "Logo file, an SVG or PNG of at most 100 kB (empty: the Gatehouse mark)", variable: "BRAND_LOGO" },
  { key: "color", question: "Primary colour as #rrggbb (empty: the default blue)", variable: "BRAND_COLOR" },
  { key: "support", question: "Support page (https://…) or email address (empty: none)", variable: "SUPPORT_URL" },
  { key: "privacyUrl", question: "Privacy policy (https://…, empty: none)", variable: "PRIVACY_URL" },
  { key: "termsUrl", question: "Terms of use (https://…, empty: none)", variable: "TERMS_URL" },
] as const satisfies readonly { key: keyof BrandAnswers; question: string; variable: string }[];

/** The name a client's pages show unless told otherwise: "acme-staging" → "Acme staging". */
export function defaultBrandName(client: string): string {
  const words = client.replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The brand's env variables from the answers (blank answers are unset), or an InstanceError naming each problem. */
export function brandVariables(answers: BrandAnswers, client: string): Record<string, string> {
  const support = answers.support?.trim() || undefined;
  // A bare address is an email; anything else (https://…) is the support page.
  const supportIsEmail = support !== undefined && /^[^\s/:]+@[^\s/]+$/.test(support);
  const variables: Record<string, string | undefined> = {
    BRAND_NAME: answers.name?.trim() || defaultBrandName(client),
    BRAND_COLOR: answers.color?.trim() || undefined,
    SUPPORT_URL: supportIsEmail ? undefined : support,
    SUPPORT_EMAIL: supportIsEmail ? support : undefined,
    PRIVACY_URL: answers.privacyUrl?.trim() || undefined,
    TERMS_URL: answers.termsUrl?.trim() || undefined,
  };
  const problems = brandProblems(variables);
  for (const [name, value] of Object.entries(variables)) {
    if (value !== undefined && /["\\]/.test(value)) problems.push(`${name}: no " or \\ (the env file quotes its values)`);
  }
  if (problems.length > 0) throw new InstanceError(problems.join("\n"));
  return Object.fromEntries(Object.entries(variables).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The logo's bytes and the name its copy gets in the instance folder, or an InstanceError naming BRAND_LOGO. */
export function readLogo(file: string): { bytes: Uint8Array; fileName: string } {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    throw new InstanceError(`BRAND_LOGO: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const checked = checkLogo(file, bytes);
  if (!checked.ok) throw new InstanceError(`BRAND_LOGO: ${file}: ${checked.problem}`);
  return { bytes, fileName: checked.logo.contentType === "image/png" ? "logo.png" : "logo.svg" };
}

export type InstanceSettings = {
  client: string;
  url: string;
  insecureLocal: boolean;
  /** No --url was given: NEXTAUTH_URL is https://<client>.example.com, to be edited. */
  placeholderUrl: boolean;
  port: number;
  /** Absolute: the server may start from another working directory (systemd, a container). */
  dataDir: string;
  createdAt: Date;
  /** BRAND_NAME and the other brand variables that are set (BRAND_LOGO absolute, inside the instance folder). */
  brand: Record<string, string>;
  secret?: () => string;
};

/** The brand variables an operator may still set, as comments, so the file shows every one. */
const BRAND_VARIABLES = ["BRAND_NAME", "BRAND_LOGO", "BRAND_COLOR", "SUPPORT_URL", "SUPPORT_EMAIL", "PRIVACY_URL", "TERMS_URL"];

/** The env file's text. Every secret is fresh; the derived defaults of lib/config/env.ts are not relied on. */
export function instanceEnvFile(settings: InstanceSettings): string {
  const secret = settings.secret ?? newSecret;
  const lines = [
    `# Gatehouse instance "${settings.client}", created ${settings.createdAt.toISOString()} by npm run instance -- new.`,
    "# Secrets: keep this file private (mode 600); a changed NEXTAUTH_SECRET signs everyone out.",
    "NODE_ENV=production",
    ...(settings.placeholderUrl
      ? ["# A placeholder (no --url was given): set the public https:// address of this instance before starting it."]
      : []),
    `NEXTAUTH_URL=${settings.url}`,
    ...(settings.insecureLocal
      ? ["# http:// on this machine: a local trial only (session cookies are not Secure).", "ALLOW_INSECURE_COOKIES=true"]
      : []),
    "# Listens on this machine only: a reverse proxy here terminates TLS and forwards to it.",
    "HOST=127.0.0.1",
    `PORT=${settings.port}`,
    "TRUSTED_PROXIES=127.0.0.1,::1",
    `NEXTAUTH_SECRET=${secret()}`,
    `RATE_LIMIT_KEY_SECRET=${secret()}`,
    `ALTCHA_HMAC_SECRET=${secret()}`,
    `API_TOKEN_SECRET=${secret()}`,
    `DEVICE_COOKIE_SECRET=${secret()}`,
    "# GET /api/metrics answers with Authorization: Bearer <METRICS_TOKEN>.",
    `METRICS_TOKEN=${secret()}`,
    "# The embedded database (PGlite): this instance's own folder, locked while a server uses it.",
    `DATABASE_URL=pglite:${path.join(settings.dataDir, "pglite")}`,
    "# Mail is written here as files until SMTP_URL is set.",
    `MAIL_OUTBOX_DIR=${path.join(settings.dataDir, "outbox")}`,
    "# SMTP_URL=smtps://user:pass@smtp.example.com:465",
    "# MAIL_FROM=",
    "# Branding: the name, logo (an SVG or PNG in this folder), colour and footer links of every page and mail.",
    // Quoted: node --env-file, systemd and compose all read an unquoted # as the start of a comment.
    ...BRAND_VARIABLES.map((name) =>
      settings.brand[name] === undefined ? `# ${name}=` : `${name}=${JSON.stringify(settings.brand[name])}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/** The ports the instances under `baseDir` already use, read from their env files. */
export function usedPorts(baseDir: string): number[] {
  if (!fs.existsSync(baseDir)) return [];
  return fs
    .readdirSync(baseDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const file = path.join(baseDir, entry.name, ENV_FILE_NAME);
      if (!fs.existsSync(file)) return [];
      const match = /^PORT=(\d+)$/m.exec(fs.readFileSync(file, "utf8"));
      return match ? [Number(match[1])] : [];
    });
}

export function nextPort(baseDir: string): number {
  const used = usedPorts(baseDir);
  return used.length === 0 ? FIRST_PORT : Math.max(FIRST_PORT - 1, ...used) + 1;
}

export type NewInstanceOptions = {
  baseDir: string;
  client?: string;
  url?: string;
  port?: string;
  dataDir?: string;
  brand?: BrandAnswers;
  now?: Date;
};

/**
 * Creates `<baseDir>/<client>/gatehouse.env` (mode 600) and the data folder. An existing env file
 * is never overwritten: the exclusive create fails instead, so its secrets and data stay valid.
 */
export function createInstance(options: NewInstanceOptions): { envFile: string; settings: InstanceSettings } {
  const client = validateClientName(options.client);
  const { url, insecureLocal } = validatePublicUrl(options.url ?? `https://${client}.example.com`);
  // A local trial's URL names the port the server itself listens on.
  const urlPort = insecureLocal ? new URL(url).port : "";
  const port = Number(options.port ?? (urlPort || nextPort(options.baseDir)));
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InstanceError(`--port ${options.port}: expected a port number`);
  const instanceDir = path.resolve(options.baseDir, client);
  const dataDir = path.resolve(options.dataDir ?? path.join(instanceDir, "data"));
  const envFile = path.join(instanceDir, ENV_FILE_NAME);
  // Every answer is checked before anything is written: a refusal leaves no folder half made.
  const brand = brandVariables(options.brand ?? {}, client);
  const logo = options.brand?.logo?.trim() ? readLogo(options.brand.logo.trim()) : null;
  // The server may start from any working directory, so the file names the copy's absolute path.
  if (logo) brand.BRAND_LOGO = path.join(instanceDir, logo.fileName);
  const settings: InstanceSettings = {
    client,
    url,
    insecureLocal,
    placeholderUrl: options.url === undefined,
    port,
    dataDir,
    createdAt: options.now ?? new Date(),
    brand,
  };
  fs.mkdirSync(instanceDir, { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = fs.openSync(envFile, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new InstanceError(
        `${envFile} exists: instance "${client}" was created before. Nothing was changed; delete that file first to start over (its data folder is ${dataDir}).`,
      );
    }
    throw error;
  }
  try {
    fs.writeSync(fd, instanceEnvFile(settings));
  } finally {
    fs.closeSync(fd);
  }
  if (logo) fs.writeFileSync(brand.BRAND_LOGO!, logo.bytes, { mode: 0o600 });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return { envFile, settings };
}
