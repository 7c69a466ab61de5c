import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { fmt, table } from "../lib/stats";
import type { RetentionChildInput, RetentionChildOutput, TableCounts } from "./retention-child";

/**
 * Part 8: what the distributed drill's spray (part 3: one wrong password for a random username
 * from each of 10,000 addresses) leaves in the database, day after day, with and without the
 * retention job (lib/retention). A lockout row outlives its failure by the quiet period and the
 * cap hold (24 h by default), so the difference shows over days, not during one drill: the clock
 * is simulated, and each failed attempt makes the writes a failed sign-in makes (the lockout
 * row, and a security event when the account exists) on two fresh PGlite databases side by side.
 * Argon2id, ALTCHA and HTTP are left out: parts 3 and 5 measure them, and they write nothing.
 */
const CHILD_TIMEOUT_MS = 12 * 60_000;
const DRILL_ADDRESSES = 10_000;
const SCALED_ATTEMPTS_PER_DAY = 2_000;
const MIB = 1024 * 1024;

function runChild(root: string, input: RetentionChildInput, databaseUrl: string, smoke: boolean): Promise<RetentionChildOutput> {
  const script = path.join(root, "bench", "parts", "retention-child.ts");
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: randomBytes(32).toString("hex"),
    LOG_LEVEL: "silent",
    RATE_LIMIT_STORE: "memory",
    // Fewer (idle) retention runs keep the smoke run short; a full run uses the default interval.
    ...(smoke ? { RETENTION_INTERVAL_MINUTES: "1440" } : {}),
  };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", script, JSON.stringify(input)],
      { cwd: root, env, timeout: CHILD_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`retention child failed: ${error.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as RetentionChildOutput);
        } catch {
          reject(new Error(`retention child printed no result:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const others = (counts: TableCounts) => counts.refreshToken + counts.downloadToken + counts.securityEvent + counts.report;
const rows = (counts: TableCounts) => `${fmt.int(counts.signInLockout)} (${fmt.fixed(counts.lockoutTableBytes / MIB, 1)} MiB)`;

export const retentionPart: Part = {
  id: "retention",
  title: PART_TITLES.retention,
  async run(context: PartContext): Promise<PartReport> {
    const input: RetentionChildInput = {
      withRetentionUrl: "",
      days: context.smoke ? 2 : 4,
      // Scaled down from part 3's 10,000: each attempt is an interactive transaction on PGlite
      // (tens of ms here), so 10,000 a day on two databases would take most of an hour.
      attemptsPerDay: context.smoke ? 10 : SCALED_ATTEMPTS_PER_DAY,
      // As long as part 3's 10,000 attempts took on this machine (about 2 minutes).
      burstMs: 120_000,
      limitMs: context.smoke ? 20_000 : 10 * 60_000,
    };
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-bench-retention-"));
    try {
      input.withRetentionUrl = `pglite:${path.join(folder, "with")}`;
      context.say(
        `${input.days} simulated days, a spray of ${fmt.int(input.attemptsPerDay)} random usernames each morning, on two databases (with and without the retention job)`,
      );
      const out = await runChild(context.root, input, `pglite:${path.join(folder, "without")}`, context.smoke);
      const last = out.samples.at(-1);
      const peakWith = Math.max(...out.samples.map((sample) => sample.with.signInLockout));
      const otherRows = Math.max(...out.samples.flatMap((sample) => [others(sample.with), others(sample.without)]));
      const scaled =
        out.daysDone < input.days
          ? ` It stopped after ${out.daysDone} of ${input.days} days at its ${input.limitMs / 60_000}-minute bound.`
          : "";
      const markdown = [
        `${fmt.int(input.attemptsPerDay)} failed sign-ins a day, each for a new random username from its own address, spread over the first ${input.burstMs / 60_000} simulated minutes of each day (part 3's spray), for ${out.daysDone} simulated days. Each attempt makes the writes a failed sign-in makes (\`admitAttempt\` on the lockout row, then the security event, which an unknown username does not get) on two fresh PGlite databases: one never runs the retention job, the other runs \`runRetention\` every ${out.settings.intervalMinutes} simulated minutes with the default policy (a lockout row goes ${out.settings.lockoutIdleHours} h after its last failure: the larger of LOCKOUT_QUIET_HOURS and LOCKOUT_CAP_HOURS) and batch (${fmt.int(out.settings.batchRows)} rows per table per run). The clock is simulated; the database work is real.${input.attemptsPerDay < DRILL_ADDRESSES ? ` Scaled: ${fmt.int(input.attemptsPerDay)} attempts a day instead of the drill's ${fmt.int(DRILL_ADDRESSES)} (each attempt is an interactive transaction on PGlite; at the rate below the full count on two databases would take most of an hour); the rows grow linearly with the count, so multiply by ${fmt.fixed(DRILL_ADDRESSES / input.attemptsPerDay, 0)} for the drill's figures.` : ""}${scaled}`,
        "",
        table(
          ["Day", "Moment", "SignInLockout rows without retention (table size)", "With retention (table size)"],
          out.samples.map((sample) => [String(sample.day), sample.moment, rows(sample.without), rows(sample.with)]),
        ),
        "",
        `- Other tables (RefreshToken, DownloadToken, SecurityEvent, Report): at most ${fmt.int(otherRows)} rows in either database: a spray of unknown usernames creates no account, so no token, event or report.`,
        `- Retention: ${fmt.int(out.retentionRuns)} runs deleted ${fmt.int(out.deletedLockouts)} lockout rows; the slowest run took ${fmt.ms(out.slowestRunMs)} (bounded by the batch).`,
        `- ${fmt.int(out.writesPerSecond)} failed attempts per second were recorded (both databases together, retention runs included) in ${fmt.fixed(out.elapsedMs / 1000, 0)} s of wall time, after ${fmt.fixed(out.setupMs / 1000, 0)} s opening and migrating the two databases.`,
      ].join("\n");
      return {
        markdown,
        headlines: [
          `Retention, ${fmt.int(input.attemptsPerDay)}-username spray a day for ${out.daysDone} simulated days: SignInLockout grows to ${last ? rows(last.without) : "n/a"} rows without the job, and stays at most ${fmt.int(peakWith)} with it (${last ? rows(last.with) : "n/a"} at the end)`,
        ],
      };
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  },
};
