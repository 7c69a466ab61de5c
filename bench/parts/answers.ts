import { request, solvedPayload, type Reply } from "../lib/http";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { fmt, summarize, table } from "../lib/stats";

/**
 * Part 9: the answers that must not tell whether an address has an account, timed from outside
 * as an attacker would time them. Registration of a new address and of a taken one (both hash
 * with Argon2id, then one INSERT … ON CONFLICT DO NOTHING; the email goes afterwards), and a
 * password-reset request for an address with an account and for one without (the lookup, the
 * link and the email happen after the answer). Alternated, each with a fresh client address and
 * a proof of work solved beforehand, so only the POST is timed.
 */

const PASSWORD = "correct horse battery staple";
const TAKEN = "answers.taken@example.com";

type Kind = "register: new address" | "register: taken address" | "reset: address with an account" | "reset: address without";

/** 10.200–215.x.y: a new client address per request, apart from every other drill's. */
function address(n: number): string {
  const value = n + 1;
  return `10.${200 + ((value >> 16) & 15)}.${(value >> 8) & 255}.${value & 255}`;
}

async function post(baseUrl: string, path: string, from: string, body: Record<string, unknown>): Promise<Reply> {
  return request(baseUrl, {
    method: "POST",
    path,
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify(body),
  });
}

export const answersPart: Part = {
  id: "answers",
  title: PART_TITLES.answers,
  async run(context: PartContext): Promise<PartReport> {
    const pairs = context.smoke ? 2 : 40;
    return context.withServer(async (server) => {
      const baseUrl = server.baseUrl;
      let n = 0;
      const first = address(n++);
      const setup = await post(baseUrl, "/api/register", first, {
        email: TAKEN,
        password: PASSWORD,
        altcha: await solvedPayload(baseUrl, first),
      });
      if (setup.status !== 202) throw new Error(`registering ${TAKEN} answered ${setup.status}: ${setup.text}`);

      const samples = new Map<Kind, Reply[]>();
      const record = (kind: Kind, reply: Reply) => samples.set(kind, [...(samples.get(kind) ?? []), reply]);
      for (let i = 0; i < pairs; i++) {
        const order: Kind[] =
          i % 2 === 0 ? ["register: new address", "register: taken address"] : ["register: taken address", "register: new address"];
        for (const kind of order) {
          const from = address(n++);
          const altcha = await solvedPayload(baseUrl, from);
          const email = kind === "register: new address" ? `answers.new.${i}@example.com` : TAKEN;
          record(kind, await post(baseUrl, "/api/register", from, { email, password: PASSWORD, altcha }));
        }
        const resets: Kind[] =
          i % 2 === 0
            ? ["reset: address with an account", "reset: address without"]
            : ["reset: address without", "reset: address with an account"];
        for (const kind of resets) {
          const from = address(n++);
          const altcha = await solvedPayload(baseUrl, from);
          const email = kind === "reset: address with an account" ? TAKEN : `answers.nobody.${i}@example.com`;
          record(kind, await post(baseUrl, "/api/password/forgot", from, { email, altcha }));
        }
      }

      const kinds: Kind[] = [
        "register: new address",
        "register: taken address",
        "reset: address with an account",
        "reset: address without",
      ];
      const rows = kinds.map((kind) => {
        const replies = samples.get(kind) ?? [];
        const times = summarize(replies.map((reply) => reply.ms));
        const statuses = [...new Set(replies.map((reply) => reply.status))].join(", ");
        const bodies = new Set(replies.map((reply) => reply.text)).size;
        return { kind, times, statuses, bodies, body: replies[0]?.text ?? "" };
      });
      const ratio = (a: Kind, b: Kind) => rows.find((row) => row.kind === a)!.times.p50 / rows.find((row) => row.kind === b)!.times.p50;
      const registerRatio = ratio("register: taken address", "register: new address");
      const resetRatio = ratio("reset: address with an account", "reset: address without");
      const sameRegisterBody = rows[0]!.body === rows[1]!.body && rows[0]!.bodies === 1 && rows[1]!.bodies === 1;
      const sameResetBody = rows[2]!.body === rows[3]!.body && rows[2]!.bodies === 1 && rows[3]!.bodies === 1;

      const markdown = [
        `Server: \`node server.mjs\`, production build, fresh PGlite database, Argon2id at OWASP's parameters, the outbox (no SMTP server). ${pairs} of each, alternated, each from its own client address with its proof of work solved beforehand: the time is the POST's round trip on loopback.`,
        "",
        table(
          ["Request", "Answers", "Distinct bodies", "p50", "p99", "mean"],
          rows.map((row) => [
            row.kind,
            row.statuses,
            String(row.bodies),
            fmt.ms(row.times.p50),
            fmt.ms(row.times.p99),
            fmt.ms(row.times.mean),
          ]),
        ),
        "",
        `p50 taken ÷ new: **${fmt.fixed(registerRatio, 2)}**; with an account ÷ without: **${fmt.fixed(resetRatio, 2)}**. Bodies byte for byte the same across new and taken: ${sameRegisterBody ? "yes" : "**no**"}; across with and without an account: ${sameResetBody ? "yes" : "**no**"}.`,
      ].join("\n");
      return {
        markdown,
        headlines: [
          `Registration, taken ÷ new address, p50: ${fmt.fixed(registerRatio, 2)} (${fmt.ms(rows[1]!.times.p50)} / ${fmt.ms(rows[0]!.times.p50)}); reset request, with ÷ without an account: ${fmt.fixed(resetRatio, 2)}`,
        ],
      };
    });
  },
};
