import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { LEAN_START, leanStartCommand } from "@/lib/server-contract.mjs";

const read = (file: string) => fs.readFileSync(file, "utf8");
const [flag] = LEAN_START.nodeFlags;
const [[variable, value]] = Object.entries(LEAN_START.environment) as [[string, string]];

/**
 * The settings an instance's memory depends on are read at process start (lib/server-contract.mjs,
 * LEAN_START), so every way of starting the server must carry them: one left behind would cost its
 * deployments some 50 MiB each without a word.
 */
describe("every start command starts the server lean", () => {
  it("npm start", () => {
    const { scripts } = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(leanStartCommand());
  });

  it("the Dockerfile's runtime stage: the variable in its ENV, the flag in its CMD", () => {
    const runtime = read("Dockerfile")
      .split(/^FROM /m)
      .at(-1)!;
    expect(runtime).toMatch(new RegExp(`^ENV (?:[^\\n]*\\\\\\n)*\\s*${variable}=${value}\\s*$`, "m"));
    expect(runtime).toMatch(new RegExp(`^CMD \\["node", "${flag}", "server\\.mjs"\\]$`, "m"));
  });

  it("the systemd unit", () => {
    const unit = read("ops/gatehouse@.service");
    expect(unit).toMatch(new RegExp(`^Environment=${variable}=${value}$`, "m"));
    expect(unit).toMatch(new RegExp(`^ExecStart=/usr/bin/node ${flag} server\\.mjs$`, "m"));
  });

  it("the operator's commands: the deployment guide and what packaging prints", () => {
    // Both name a file the operator supplies, in shell syntax the command itself would quote.
    const withEnvFile = (file: string) => leanStartCommand().replace(/ server\.mjs$/, ` --env-file=${file} server.mjs`);
    expect(read("docs/deployment.md")).toContain(withEnvFile('"$env_file"'));
    expect(read("scripts/package-standalone.sh")).toContain(withEnvFile("<instance env file>"));
  });

  it("quotes what the shell would read: a path with a space or a quote", () => {
    expect(leanStartCommand(["--env-file=/srv/my instances/it's.env"])).toBe(
      `${variable}=${value} node ${flag} '--env-file=/srv/my instances/it'\\''s.env' server.mjs`,
    );
  });
});

/**
 * The Gatehouse reads the peer header's name once, when it is built (lib/app.ts), and Next.js
 * builds it while it prepares (instrumentation.ts): server.mjs must announce the header before
 * that, or every request's address would be unknown and the routes would answer 503.
 */
describe("server.mjs announces its peer header before Next.js builds the Gatehouse", () => {
  it("sets the slot before it creates or prepares the Next.js app", () => {
    const source = read("server.mjs");
    const announced = source.indexOf("shared[PEER_HEADER_SYMBOL] = PEER_HEADER;");
    expect(announced).toBeGreaterThan(0);
    expect(announced).toBeLessThan(source.indexOf("next({ dev, hostname, port })"));
    expect(announced).toBeLessThan(source.indexOf("await app.prepare()"));
  });
});
