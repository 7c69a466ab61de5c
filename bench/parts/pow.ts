import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium, type Browser, type Page } from "@playwright/test";
import { solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";
import { issueChallenge, verifyAltcha, type AltchaSettings } from "@/lib/captcha/altcha";
import { MAX_LEVEL, maxCounterAt } from "@/lib/captcha/difficulty";
import { memoryReplayStore } from "@/lib/captcha/replay-store";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { fmt, summarize, table } from "../lib/stats";

/**
 * Part 7: what the proof of work costs at each level the server can ask for
 * (lib/captcha/difficulty.ts: maxCounter = base × 2^level, level 0 to 3, raised by the hash
 * budget's pressure and the address's failures; a known device always gets level 0).
 *
 * - The attacker's bill: challenges made by the server's own issueChallenge, solved in Node with
 *   altcha-lib's solveChallenge + SHA-256 deriveKey (as tests/helpers/altcha.ts and the other
 *   drills do), CPU time per derived key from a bounded sample, times the hashes a challenge of
 *   that size takes on average, for 10,000 attempts.
 * - The legitimate user's wait: the same challenges solved in Chromium, by the real widget (the
 *   `altcha` package the sign-in page uses, with its Web Workers) on a page served from loopback,
 *   and by altcha-lib's own solver with the WebCrypto deriveKey (one thread). Every browser
 *   solution is checked with the server's verifyAltcha.
 */

const BASE_MAX_COUNTER = 100_000;
const ATTEMPTS = 10_000;

type Sizes = { base: number; nodeRounds: number; nodeSolves: number; browserSolves: number; browserLevelLimitMs: number };

function sizes(smoke: boolean): Sizes {
  return smoke
    ? { base: 1_000, nodeRounds: 1, nodeSolves: 1, browserSolves: 1, browserLevelLimitMs: 10_000 }
    : { base: BASE_MAX_COUNTER, nodeRounds: 3, nodeSolves: 5, browserSolves: 3, browserLevelLimitMs: 45_000 };
}

type NodeSolve = { counter: number; wallMs: number; cpuMs: number };

async function solveInNode(challenge: Challenge): Promise<NodeSolve> {
  const cpu = process.cpuUsage();
  const startedMs = performance.now();
  const solution = await solveChallenge({ challenge, deriveKey });
  const wallMs = performance.now() - startedMs;
  const used = process.cpuUsage(cpu);
  if (!solution) throw new Error("Node could not solve a challenge");
  return { counter: solution.counter, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** Mean secret number of a challenge of this size: uniform in [max/10, max] (lib/captcha/altcha.ts). */
function meanCounter(maxCounter: number): number {
  return (Math.max(1, Math.floor(maxCounter / 10)) + maxCounter) / 2;
}

/**
 * A loopback server for the browser: a page with the widget, the widget's script and altcha-lib's
 * browser modules from node_modules, and /challenge, which answers the challenge the bench set.
 */
async function pageServer(root: string): Promise<{ url: string; setChallenge(challenge: Challenge): void; close(): Promise<void> }> {
  let current: Challenge | null = null;
  const widgetScript = path.join(root, "node_modules", "altcha", "dist", "main", "altcha.js");
  const libRoot = path.join(root, "node_modules", "altcha-lib", "dist", "esm", "v2");
  const page = {
    html: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bench</title><script type="module" src="/altcha.js"></script></head><body><form><altcha-widget id="widget" challenge="/challenge" auto="off" name="altcha"></altcha-widget></form></body></html>',
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    if (url.pathname === "/") return send(200, "text/html; charset=utf-8", page.html);
    if (url.pathname === "/altcha.js") return send(200, "text/javascript", fs.readFileSync(widgetScript));
    if (url.pathname === "/challenge")
      return current ? send(200, "application/json", JSON.stringify(current)) : send(404, "text/plain", "no challenge");
    if (url.pathname.startsWith("/altcha-lib/")) {
      const file = path.join(libRoot, url.pathname.slice("/altcha-lib/".length));
      if (file.startsWith(libRoot + path.sep) && file.endsWith(".js") && fs.existsSync(file))
        return send(200, "text/javascript", fs.readFileSync(file));
    }
    return send(404, "text/plain", "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}/`,
    setChallenge: (challenge) => (current = challenge),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type BrowserSolve = {
  widgetWallMs: number;
  widgetSolveMs: number;
  widgetCounter: number;
  widgetVerified: boolean;
  libMs: number;
  libCounter: number;
};

/**
 * One challenge in the page: first the widget (verify(), as the sign-in page's submit calls it;
 * the solution's own `time` is the solve alone), then altcha-lib's solver on one thread. Both run
 * as string expressions, so that nothing the bench's TypeScript compiler adds reaches the page.
 */
async function solveInBrowser(
  page: Page,
  server: { setChallenge(challenge: Challenge): void },
  challenge: Challenge,
  settings: AltchaSettings,
): Promise<BrowserSolve> {
  server.setChallenge(challenge);
  const widget = (await page.evaluate(`(async () => {
    await customElements.whenDefined("altcha-widget");
    const element = document.getElementById("widget");
    element.reset();
    const startedMs = performance.now();
    const result = await element.verify();
    return { wallMs: performance.now() - startedMs, payload: (result && result.payload) || "" };
  })()`)) as { wallMs: number; payload: string };
  const decoded = JSON.parse(Buffer.from(widget.payload, "base64").toString("utf8")) as { solution?: { time?: number; counter?: number } };
  // The server's own check: the browser's work is a solution the sign-in would accept.
  const verified = await verifyAltcha(widget.payload, settings, memoryReplayStore(10), Date.now());
  const lib = (await page.evaluate(`(async () => {
    const { solveChallenge } = await import("/altcha-lib/pow.js");
    const { deriveKey } = await import("/altcha-lib/algorithms/web/sha.js");
    const startedMs = performance.now();
    const solution = await solveChallenge({ challenge: ${JSON.stringify(challenge)}, deriveKey });
    return { ms: performance.now() - startedMs, counter: solution ? solution.counter : -1 };
  })()`)) as { ms: number; counter: number };
  return {
    widgetWallMs: widget.wallMs,
    widgetSolveMs: decoded.solution?.time ?? Number.NaN,
    widgetCounter: decoded.solution?.counter ?? -1,
    widgetVerified: verified.ok,
    libMs: lib.ms,
    libCounter: lib.counter,
  };
}

async function run(context: PartContext): Promise<PartReport> {
  const size = sizes(context.smoke);
  const settingsAt = (level: number): AltchaSettings => ({
    hmacSecret: "bench-altcha-secret-".padEnd(40, "x"),
    expiresSeconds: 600,
    maxCounter: maxCounterAt(size.base, level),
  });
  const levels = Array.from({ length: MAX_LEVEL + 1 }, (_, level) => level);

  // The same challenges for Node and the browser, so their times compare work for work.
  const challenges = new Map<number, Challenge[]>();
  for (const level of levels)
    challenges.set(level, await Promise.all(Array.from({ length: size.nodeSolves }, () => issueChallenge(settingsAt(level), Date.now()))));

  context.say(
    `Node: ${size.nodeRounds} round(s) of ${size.nodeSolves} solve(s) per level, maxCounter ${levels.map((level) => fmt.int(maxCounterAt(size.base, level))).join(" / ")}`,
  );
  await solveInNode(await issueChallenge(settingsAt(0), Date.now())); // warm-up
  // Round 1 solves the challenges the browser gets too; later rounds draw new ones. Each round's
  // CPU per derived key (the solver derives counter + 1 keys: it counts from 0) gives one figure,
  // so the cost is a range over rounds, not one lucky or unlucky run.
  const node = new Map<number, NodeSolve[]>(levels.map((level) => [level, []]));
  const cpuPerKeyMsByRound: number[] = [];
  for (let round = 0; round < size.nodeRounds; round++) {
    const roundSolves: NodeSolve[] = [];
    for (const level of levels) {
      const roundChallenges =
        round === 0
          ? challenges.get(level)!
          : await Promise.all(Array.from({ length: size.nodeSolves }, () => issueChallenge(settingsAt(level), Date.now())));
      for (const challenge of roundChallenges) roundSolves.push(await solveInNode(challenge));
      node.get(level)!.push(...roundSolves.slice(-roundChallenges.length));
    }
    const keys = roundSolves.reduce((sum, solve) => sum + solve.counter + 1, 0);
    cpuPerKeyMsByRound.push(roundSolves.reduce((sum, solve) => sum + solve.cpuMs, 0) / keys);
    context.say(`Node round ${round + 1}: ${fmt.fixed(cpuPerKeyMsByRound[round]! * 1000, 2)} µs of CPU per key`);
  }
  const allNode = [...node.values()].flat();
  const cpuPerKeyMs = allNode.reduce((sum, solve) => sum + solve.cpuMs, 0) / allNode.reduce((sum, solve) => sum + solve.counter + 1, 0);
  const cpuPerKeyRangeMs = { min: Math.min(...cpuPerKeyMsByRound), max: Math.max(...cpuPerKeyMsByRound) };
  /** CPU-minutes for ATTEMPTS solves at this size, from a CPU cost per key. */
  const cpuMinutes = (maxCounter: number, perKeyMs: number) => ((meanCounter(maxCounter) + 1) * perKeyMs * ATTEMPTS) / 60_000;
  /** The range over the rounds, "a–b", or one figure when they agree to the shown precision. */
  const cpuMinutesRange = (maxCounter: number) => {
    const [low, high] = [cpuMinutes(maxCounter, cpuPerKeyRangeMs.min), cpuMinutes(maxCounter, cpuPerKeyRangeMs.max)].map((value) =>
      fmt.fixed(value, 1),
    );
    return low === high ? low! : `${low}–${high}`;
  };

  const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  const browserSolves = new Map<number, BrowserSolve[]>();
  let browserNote = "";
  let browserVersion = "";
  let hardwareConcurrency = Number.NaN;
  if (!fs.existsSync(executablePath)) {
    browserNote = `No browser at ${executablePath} (set CHROMIUM_PATH): the browser columns are empty.`;
    context.say(browserNote);
  } else {
    context.say(`Chromium: up to ${size.browserSolves} solve(s) per level, widget and altcha-lib, the same challenges`);
    const server = await pageServer(context.root);
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
      browserVersion = browser.version();
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(server.url);
      hardwareConcurrency = (await page.evaluate("navigator.hardwareConcurrency")) as number;
      // Warm-up: the widget's script, its workers and the modules load once.
      await solveInBrowser(page, server, await issueChallenge(settingsAt(0), Date.now()), settingsAt(0));
      for (const level of levels) {
        const solves: BrowserSolve[] = [];
        const levelStartedMs = performance.now();
        for (const challenge of challenges.get(level)!.slice(0, size.browserSolves)) {
          if (performance.now() - levelStartedMs > size.browserLevelLimitMs) break;
          solves.push(await solveInBrowser(page, server, challenge, settingsAt(level)));
        }
        browserSolves.set(level, solves);
      }
      if (pageErrors.length > 0) browserNote = `The page reported: ${pageErrors.slice(0, 3).join("; ")}.`;
    } finally {
      await browser?.close();
      await server.close();
    }
  }

  const rows = levels.map((level) => {
    const maxCounter = maxCounterAt(size.base, level);
    const solves = node.get(level)!;
    const nodeWall = summarize(solves.map((solve) => solve.wallMs));
    const sampleCpuMs = summarize(solves.map((solve) => solve.cpuMs)).mean;
    const browser = browserSolves.get(level) ?? [];
    const widgetSolve = summarize(browser.map((solve) => solve.widgetSolveMs));
    const widgetWall = summarize(browser.map((solve) => solve.widgetWallMs));
    const lib = summarize(browser.map((solve) => solve.libMs));
    const nodeOfBrowser = summarize(solves.slice(0, browser.length).map((solve) => solve.wallMs));
    // Keys derived per second, median over the solves: the solver's speed, free of the luck of the draw.
    const rate = (keys: number[], ms: number[]) => summarize(keys.map((key, i) => (1000 * key) / ms[i]!)).p50;
    const browserKeys = browser.map((solve) => solve.libCounter + 1);
    const rates = {
      node: rate(
        solves.map((solve) => solve.counter + 1),
        solves.map((solve) => solve.wallMs),
      ),
      widget: rate(
        browserKeys,
        browser.map((solve) => solve.widgetSolveMs),
      ),
      lib: rate(
        browserKeys,
        browser.map((solve) => solve.libMs),
      ),
    };
    return {
      level,
      maxCounter,
      widgetMeanMs: (1000 * (meanCounter(maxCounter) + 1)) / rates.widget,
      cells: [
        String(level),
        fmt.int(maxCounter),
        fmt.int(meanCounter(maxCounter)),
        `${cpuMinutesRange(maxCounter)} CPU-min (${fmt.fixed((sampleCpuMs * ATTEMPTS) / 60_000, 1)})`,
        `${fmt.int(rates.node / 1000)}k / ${browser.length === 0 ? "n/a" : `${fmt.int(rates.widget / 1000)}k / ${fmt.int(rates.lib / 1000)}k`}`,
        `${fmt.ms((1000 * (meanCounter(maxCounter) + 1)) / rates.node)} / ${browser.length === 0 ? "n/a" : fmt.ms((1000 * (meanCounter(maxCounter) + 1)) / rates.widget)}`,
        `${fmt.ms(nodeWall.p50)} (${solves.length})`,
        browser.length === 0 ? "n/a" : `${fmt.ms(widgetSolve.p50)} / ${fmt.ms(widgetWall.p50)} (${browser.length})`,
        browser.length === 0 ? "n/a" : `${fmt.ms(lib.p50)} / ${fmt.ms(nodeOfBrowser.p50)}`,
        browser.length === 0 ? "n/a" : `${browser.filter((solve) => solve.widgetVerified).length}/${browser.length}`,
      ],
    };
  });
  // The three solvers must find the same secret number in each challenge: the same work.
  let compared = 0;
  let agreed = 0;
  for (const level of levels) {
    for (const [i, solve] of (browserSolves.get(level) ?? []).entries()) {
      compared++;
      const counter = node.get(level)![i]!.counter;
      if (solve.widgetCounter === counter && solve.libCounter === counter) agreed++;
    }
  }

  const markdown = [
    `Challenges from the server's own \`issueChallenge\` (SHA-256, cost 1; the secret number uniform in [maxCounter/10, maxCounter]) at maxCounter = ${fmt.int(size.base)} × 2^level, the sizes \`lib/captcha/difficulty.ts\` asks for with the default \`ALTCHA_MAX_COUNTER\`. The same challenges are solved in Node and in the browser. A solver derives one SHA-256 key per counter from 0 up to the secret number.`,
    "",
    `- **Attacker (Node)**: altcha-lib's \`solveChallenge\` with the Node \`deriveKey\` (as \`tests/helpers/altcha.ts\`), one at a time in the bench process, ${size.nodeRounds} round(s) of ${size.nodeSolves} solve(s) per level: ${fmt.int(allNode.length)} solves, ${fmt.int(allNode.reduce((sum, solve) => sum + solve.counter + 1, 0))} keys derived, **${fmt.fixed(cpuPerKeyRangeMs.min * 1000, 2)}–${fmt.fixed(cpuPerKeyRangeMs.max * 1000, 2)} µs of CPU per key** over the rounds (${fmt.fixed(cpuPerKeyMs * 1000, 2)} over all solves). "Extrapolated" multiplies that range by the mean number of keys at the level (the mean secret number + 1) and by ${fmt.int(ATTEMPTS)} attempts; in brackets, the same from all the level's solves' mean CPU per solve (few solves, each a random draw of the secret number: noisier). Keys per second, free of that draw, say how fast each solver is; the mean solve at a level follows from them. An attacker with a native or GPU SHA-256 pays less than this JavaScript solver.`,
    `- **Legitimate user (Chromium ${browserVersion || "n/a"}, headless, navigator.hardwareConcurrency = ${Number.isFinite(hardwareConcurrency) ? hardwareConcurrency : "n/a"})**: the real widget (\`altcha\` ${readVersion(context.root, "altcha")}, the sign-in page's, solving in as many Web Workers as hardwareConcurrency) on a page served from 127.0.0.1 (a secure context, as WebCrypto needs), \`verify()\` as the page's submit calls it: the solve alone (the solution's own \`time\`) and what the user waits (incl. the challenge fetch and the widget's 500 ms minimum); and altcha-lib's solver with its WebCrypto \`deriveKey\` on one thread, for work comparable with Node's. Every widget solution was checked with the server's \`verifyAltcha\`.`,
    "",
    table(
      [
        "Level",
        "maxCounter",
        "Mean keys per solve",
        `Attacker: CPU for ${fmt.int(ATTEMPTS)} attempts, extrapolated (from the sample)`,
        "Keys/s, p50 over the solves: Node / widget / altcha-lib in Chromium",
        "Mean solve at this level (mean keys ÷ keys/s): Node / widget",
        "Node: solve p50 (solves)",
        "Chromium widget: solve / user waits, p50 (solves)",
        "Chromium altcha-lib, one thread / Node, same challenges: p50",
        "Widget solutions the server accepts",
      ],
      rows.map((row) => row.cells),
    ),
    "",
    `Level 0 is what a known device always gets and what anyone gets on a calm server; each level doubles the work for the attacker and for a new device's user alike.${compared > 0 ? ` Node, the widget and the in-page solver found the same secret number in ${agreed} of ${compared} browser challenges.` : ""}${browserNote ? ` ${browserNote}` : ""}`,
  ].join("\n");
  const level3 = rows[MAX_LEVEL]!;
  const level0 = rows[0]!;
  return {
    markdown,
    headlines: [
      `Proof of work: an attacker pays ${cpuMinutesRange(level0.maxCounter)} CPU-minutes per ${fmt.int(ATTEMPTS)} attempts at level 0 (maxCounter ${fmt.int(level0.maxCounter)}) and ${cpuMinutesRange(level3.maxCounter)} at level 3 (${fmt.int(level3.maxCounter)}), in Node (${size.nodeRounds} rounds); the sign-in page's widget in Chromium takes ${fmt.ms(level0.widgetMeanMs)} on average at level 0 and ${fmt.ms(level3.widgetMeanMs)} at level 3`,
    ],
  };
}

function readVersion(root: string, name: string): string {
  try {
    return (
      (JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version?: string }).version ?? "?"
    );
  } catch {
    return "?";
  }
}

export const powPart: Part = {
  id: "pow",
  title: PART_TITLES.pow,
  run,
};
