// @ts-check
// The peer Gatehouse is measured against (bench part 11): better-auth with email and password,
// its default rate limiter (in memory, 3 per 10 s per address on /sign-in), SQLite through
// better-sqlite3, behind a plain Node HTTP server, as its documentation sets it up. The bench
// starts it with PEER_PORT, PEER_DB (a SQLite file), PEER_SECRET and PEER_HASH ("argon2id": the
// parameters Gatehouse uses, through the same @node-rs/argon2; "scrypt": better-auth's default).
// It prints "ready" once it listens. With PEER_OUTBOX (a folder), "forgot password" is on and each
// reset mail is a JSON file there in the shape of Gatehouse's outbox sidecars (bench part 13).
// Only the bench runs this file; it is no part of the app.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { hash, verify } from "@node-rs/argon2";
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import Database from "better-sqlite3";

const port = Number(process.env.PEER_PORT ?? "0");
const hashing = process.env.PEER_HASH ?? "argon2id";
// Gatehouse's parameters (lib/password/hash.ts: OWASP's m=19456 KiB, t=2, p=1).
const ARGON2ID = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 };
const outbox = process.env.PEER_OUTBOX;
let mails = 0;

/** @type {import("better-auth").BetterAuthOptions} */
const options = {
  baseURL: `http://127.0.0.1:${port}`,
  secret: process.env.PEER_SECRET,
  database: new Database(process.env.PEER_DB ?? ":memory:"),
  emailAndPassword: {
    enabled: true,
    ...(hashing === "argon2id"
      ? {
          password: {
            hash: (/** @type {string} */ password) => hash(password, ARGON2ID),
            verify: (/** @type {{ hash: string; password: string }} */ { hash: stored, password }) => verify(stored, password),
          },
        }
      : {}),
    ...(outbox
      ? {
          sendResetPassword: async (/** @type {{ user: { email: string }; url: string }} */ { user, url }) => {
            const mail = { to: user.email, kind: "password_reset", text: url, links: [{ label: "Reset your password", url }] };
            mkdirSync(outbox, { recursive: true });
            // Written aside, then renamed: a reader sees the whole file or none.
            const file = path.join(outbox, `${Date.now()}-${++mails}.json`);
            writeFileSync(`${file}.tmp`, JSON.stringify(mail));
            renameSync(`${file}.tmp`, file);
          },
        }
      : {}),
  },
  // Its defaults, on as in production: memory storage, 100 per 10 s, and 3 per 10 s on /sign-in.
  rateLimit: { enabled: true },
  // The bench client is the proxy, as for Gatehouse: it names each simulated client.
  advanced: { ipAddress: { ipAddressHeaders: ["x-forwarded-for"], trustedProxies: ["127.0.0.1"] } },
  logger: { level: "error" },
};

const { runMigrations } = await getMigrations(options);
await runMigrations();
const auth = betterAuth(options);
const handler = toNodeHandler(auth);

const server = createServer((req, res) => {
  if (req.url === "/") {
    // The bench's "page load": a static answer, the nearest the peer has to a page.
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    return;
  }
  void handler(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
