import { randomBytes } from "node:crypto";
import net from "node:net";
import { getCsrf, register, request } from "../lib/http";
import { legitSignIn, legitUser, type LegitUser } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, startServer, type BenchServer } from "../lib/server";
import { fmt, table } from "../lib/stats";

/**
 * Part 14: one client that holds the server's connections and reopens each one it loses, beside
 * new visitors (issue 59). The client connects from 127.0.0.2, an address of its own that is no
 * trusted proxy, so the server counts its connections under it; the visitors sign in as the page
 * does through the bench's proxy address (127.0.0.1), each named in X-Forwarded-For.
 */

const HOLDER = "127.0.0.2";
const PASSWORD = "correct horse battery staple";
const VISIT_DEADLINE_MS = 5_000;

type Attack = { kind: "silent" | "keep-alive"; connections: number };
type Setting = { label: string; openFilesLimit?: number };
type Row = {
  setting: string;
  attack: string;
  held: number;
  opened: number;
  visitorsIn: number;
  visitors: number;
  slowestMs: number;
  outcomes: string;
  closed: string;
};

/**
 * Holds `connections` sockets from HOLDER, each silent or after one keep-alive request, and opens
 * a new one whenever the server closes one, until stopped. Opens at most 200 at a time so that
 * the bench's own loop keeps turning.
 */
function holdConnections(port: number, attack: Attack) {
  const open = new Set<net.Socket>();
  let opened = 0;
  let connecting = 0;
  let stopped = false;
  const fill = () => {
    while (!stopped && open.size + connecting < attack.connections && connecting < 200) {
      connecting++;
      const socket = net.connect({ port, host: "127.0.0.1", localAddress: HOLDER });
      socket.on("error", () => {});
      socket.once("connect", () => {
        connecting--;
        opened++;
        open.add(socket);
        if (attack.kind === "keep-alive") socket.write("GET /robots.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        socket.resume();
        setImmediate(fill);
      });
      socket.once("close", () => {
        if (open.delete(socket)) setTimeout(fill, 5);
        else {
          connecting--;
          setTimeout(fill, 5);
        }
      });
    }
  };
  fill();
  return {
    get held() {
      return open.size;
    },
    get opened() {
      return opened;
    },
    stop() {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

async function closedByGuard(server: BenchServer, metricsToken: string): Promise<string> {
  const metrics = await request(server.baseUrl, {
    method: "GET",
    path: "/api/metrics",
    headers: { authorization: `Bearer ${metricsToken}` },
  }).catch(() => null);
  const lines = (metrics?.text ?? "").split("\n").filter((line) => line.startsWith("gatehouse_connections_closed_total{"));
  const counts = lines
    .map((line) => /action="(\w+)",limit="(\w+)"} (\d+)/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[3] !== "0")
    .map((match) => `${match[1]} (${match[2]}) ${fmt.int(Number(match[3]))}`);
  return counts.length > 0 ? counts.join(", ") : "none";
}

async function drill(context: PartContext, setting: Setting, attack: Attack, visitors: number): Promise<Row> {
  const metricsToken = randomBytes(24).toString("hex");
  const server = await startServer(
    context.root,
    { ...DRILL_SETTINGS, METRICS_TOKEN: metricsToken },
    context.say,
    "127.0.0.1",
    setting.openFilesLimit,
  );
  try {
    const users: LegitUser[] = [];
    for (let i = 0; i < visitors; i++) {
      const email = `visitor.${i}@example.com`;
      const from = `10.40.${i}.1`;
      const reply = await register(server.baseUrl, from, email, PASSWORD);
      if (reply.status >= 300) throw new Error(`registering ${email} answered ${reply.status}`);
      users.push(legitUser(`visitor ${i}`, email, PASSWORD, false, (n) => `10.41.${i}.${n + 1}`));
    }
    const port = Number(new URL(server.baseUrl).port);
    const holder = holdConnections(port, attack);
    // Long enough for the holder to reach its count and for the first-byte deadline (5 s) to have
    // closed its first silent sockets, which it then reopens.
    await new Promise((resolve) => setTimeout(resolve, context.smoke ? 1_000 : 7_000));
    const results = [];
    for (const user of users) {
      const csrf = await getCsrf(server.baseUrl).catch(() => null);
      const result = csrf
        ? await legitSignIn(server.baseUrl, csrf, user, 1).catch((error: unknown) => ({
            signedIn: false,
            totalMs: Number.NaN,
            outcome: error instanceof Error ? error.message.slice(0, 60) : "failed",
          }))
        : { signedIn: false, totalMs: Number.NaN, outcome: "no CSRF token" };
      results.push(result);
    }
    const held = holder.held;
    const opened = holder.opened;
    holder.stop();
    const inTime = results.filter((result) => result.signedIn && result.totalMs <= VISIT_DEADLINE_MS);
    const outcomes = new Map<string, number>();
    for (const result of results) outcomes.set(result.outcome, (outcomes.get(result.outcome) ?? 0) + 1);
    return {
      setting: setting.label,
      attack: `${fmt.int(attack.connections)} ${attack.kind}`,
      held,
      opened,
      visitorsIn: inTime.length,
      visitors,
      slowestMs: Math.max(...results.map((result) => (Number.isFinite(result.totalMs) ? result.totalMs : 0))),
      outcomes: [...outcomes].map(([label, n]) => `${label}: ${n}`).join("; "),
      closed: await closedByGuard(server, metricsToken),
    };
  } finally {
    await server.stop();
  }
}

export const connectionsPart: Part = {
  id: "connections",
  title: PART_TITLES.connections,
  async run(context: PartContext): Promise<PartReport> {
    const visitors = context.smoke ? 2 : 10;
    const settings: Setting[] = [{ label: "defaults" }, { label: "`ulimit -n 1024`", openFilesLimit: 1024 }];
    const attacks: Attack[] = context.smoke
      ? [{ kind: "silent", connections: 300 }]
      : [
          { kind: "silent", connections: 1_500 },
          { kind: "keep-alive", connections: 5_000 },
        ];
    const rows: Row[] = [];
    for (const setting of context.smoke ? settings.slice(0, 1) : settings)
      for (const attack of attacks) {
        context.say(`connections: ${setting.label}, ${attack.connections} ${attack.kind}`);
        rows.push(await drill(context, setting, attack, visitors));
      }
    const worst = Math.min(...rows.map((row) => row.visitorsIn / row.visitors));
    const goal = `at least 9 of 10 visitors in within ${VISIT_DEADLINE_MS / 1000} s in every row: ${worst >= 0.9 ? "**met**" : "**not met**"}`;
    const markdown = [
      `Servers: \`node server.mjs\` (production build, fresh PGlite database, \`MAX_CONNECTIONS\` and \`MAX_CONNECTIONS_PER_ADDRESS\` at their defaults, 1,024 and a quarter of it, lowered to the open-files limit less 128). One client at ${HOLDER} opens its connections (silent, or each after one keep-alive request for /robots.txt) and reopens each one the server closes, at most 200 connecting at a time; 7 s later, while it goes on, ${visitors} visitors sign in one after another as the page does (CSRF token, challenge, proof of work, POST), each from an address of its own through the trusted-proxy header. In: signed in within ${VISIT_DEADLINE_MS / 1000} s. The guard's closings come from /api/metrics (\`gatehouse_connections_closed_total\`).`,
      "",
      table(
        [
          "Server",
          "The client's connections",
          "Held at the end",
          "Opened in all",
          "Visitors in",
          "Slowest visitor",
          "Visitors' answers",
          "Closed by the guard",
        ],
        rows.map((row) => [
          row.setting,
          row.attack,
          fmt.int(row.held),
          fmt.int(row.opened),
          `**${row.visitorsIn} of ${row.visitors}**`,
          fmt.ms(row.slowestMs),
          row.outcomes,
          row.closed,
        ]),
      ),
      "",
      `Goal (issue 59): ${goal}.`,
    ].join("\n");
    return {
      markdown,
      headlines: [
        `Idle connections: one client holding and reopening ${rows.map((row) => `${row.attack} (${row.setting}): ${row.visitorsIn}/${row.visitors} visitors in`).join("; ")}; ${goal}`,
      ],
    };
  },
};
