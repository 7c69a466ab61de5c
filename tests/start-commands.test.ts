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

  it("the Dockerfile: the variable in ENV, the flag in CMD", () => {
    const dockerfile = read("Dockerfile");
    expect(dockerfile).toMatch(new RegExp(`^\\s*${variable}=${value}\\s*$`, "m"));
    expect(dockerfile).toContain(`CMD ["node", "${flag}", "server.mjs"]`);
  });

  it("the systemd unit", () => {
    const unit = read("ops/gatehouse@.service");
    expect(unit).toContain(`Environment=${variable}=${value}`);
    expect(unit).toMatch(new RegExp(`^ExecStart=/usr/bin/node ${flag} server\\.mjs$`, "m"));
  });

  it("the operator's commands: the deployment guide and what packaging prints", () => {
    expect(read("docs/deployment.md")).toContain(leanStartCommand(['--env-file="$env_file"']));
    expect(read("scripts/package-standalone.sh")).toContain(leanStartCommand(["--env-file=<instance env file>"]));
  });
});
