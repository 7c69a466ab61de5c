import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

/**
 * better-sqlite3 is a native module, and npm 11 runs no dependency's install script unless the
 * project allows it (allowScripts): the root's `npm ci` stays free of compilers and of downloads
 * beyond the registry. The peer part builds the binding itself, once per machine and Node ABI,
 * with the node-gyp that ships with npm against this Node's own headers (no download), and keeps
 * it in ~/.cache/gatehouse-bench, so later runs (and CI's smoke run after each `npm ci`) copy it.
 */
export function ensureSqliteBinding(say: (line: string) => void): void {
  const require = createRequire(path.join(__dirname, "package.json"));
  const packageDir = path.dirname(require.resolve("better-sqlite3/package.json"));
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
  const binding = path.join(packageDir, "build", "Release", "better_sqlite3.node");
  if (fs.existsSync(binding)) return;
  const cached = path.join(os.homedir(), ".cache", "gatehouse-bench", `better_sqlite3-${version}-abi${process.versions.modules}.node`);
  if (!fs.existsSync(cached)) {
    const nodeDir = path.dirname(path.dirname(process.execPath));
    const nodeGyp = path.join(nodeDir, "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
    if (!fs.existsSync(path.join(nodeDir, "include", "node", "node.h")) || !fs.existsSync(nodeGyp))
      throw new Error(
        `better-sqlite3 has no binding and none can be built here (needs ${nodeGyp} and Node's headers in ${nodeDir}/include)`,
      );
    say(`building better-sqlite3 ${version}'s binding (once per machine; about 2 minutes)`);
    execFileSync(process.execPath, [nodeGyp, "rebuild", "--release", `--nodedir=${nodeDir}`], {
      cwd: packageDir,
      stdio: ["ignore", "ignore", "inherit"],
      timeout: 10 * 60_000,
    });
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    fs.copyFileSync(binding, cached);
    return;
  }
  fs.mkdirSync(path.dirname(binding), { recursive: true });
  fs.copyFileSync(cached, binding);
}
