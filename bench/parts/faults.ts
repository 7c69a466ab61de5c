import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { recipientOf, startMailbox } from "@/tests/helpers/smtp";
import { request, solvedPayload, type Reply } from "../lib/http";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, startServer, type BenchServer } from "../lib/server";
import { fmt, nowMs, sleep, table } from "../lib/stats";

/**
 * Part 16: kill -9 while requests that promise mail are in flight (issue 59). Registrations with
 * email verification answer 202 "we sent you a link"; once half of a burst has been answered the
 * server is killed with SIGKILL, started again on the same PGlite folder, and the test SMTP server
 * counts what each address receives. Every address answered 202 must get its link exactly once,
 * within a minute of the restart (the killed process's spool lease, 40 s, and a sweep); an
 * address whose request was cut off by the kill was promised nothing, and gets at most one.
 */

const PASSWORD = "correct horse battery staple";
// The lease a killed process leaves (40 s, lib/mail/spool.ts) and a sweep after it.
const DELIVERY_DEADLINE_MS = 60_000;
// Waited past the deadline, so that a late or second copy is seen rather than cut off.
const SETTLE_MS = 10_000;

type Row = {
  round: number;
  sent: number;
  promised: number;
  cutOff: number;
  promisedOnce: number;
  missing: number;
  duplicated: number;
  cutOffDelivered: number;
  lastAfterRestartMs: number;
  restartMs: number;
};

const address = (round: number, n: number) => `10.16.${round}.${n + 1}`;

async function round(context: PartContext, index: number, registrations: number): Promise<Row> {
  const mailbox = await startMailbox();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-bench-faults-"));
  const settings = {
    ...DRILL_SETTINGS,
    DATABASE_URL: `pglite:${dataDir}`,
    REQUIRE_EMAIL_VERIFICATION: "true",
    SMTP_URL: `smtp://127.0.0.1:${mailbox.port}`,
    MAIL_FROM: "Gatehouse bench <no-reply@bench.example>",
    MAIL_RETRY_BASE_MS: "200",
  };
  let server: BenchServer | undefined;
  try {
    server = await startServer(context.root, settings, context.say);
    const emails = Array.from({ length: registrations }, (_, n) => `faults-${index}-${n}@bench.example`);
    // Solved before the burst, so the kill finds the requests in the server, not in the bench.
    const payloads = await Promise.all(emails.map((_, n) => solvedPayload(server!.baseUrl, address(index, n))));
    const answers = new Map<string, Reply | "cut off">();
    const halfAnswered = Math.ceil(registrations / 2);
    let killed: Promise<void> | undefined;
    const running = emails.map(async (email, n) => {
      const reply = await request(
        server!.baseUrl,
        {
          method: "POST",
          path: "/api/register",
          headers: { "content-type": "application/json", "x-forwarded-for": address(index, n) },
          body: JSON.stringify({ email, password: PASSWORD, altcha: payloads[n] }),
        },
        30_000,
      ).catch(() => "cut off" as const);
      answers.set(email, reply);
      // kill -9 as soon as half have their answer: the rest are in the server somewhere.
      if ([...answers.values()].filter((answer) => answer !== "cut off").length >= halfAnswered) killed ??= server!.kill();
    });
    await Promise.all(running);
    await (killed ?? server.kill());
    const promised = emails.filter((email) => {
      const answer = answers.get(email);
      return answer !== undefined && answer !== "cut off" && answer.status === 202;
    });
    const cutOff = emails.filter((email) => !promised.includes(email));
    context.say(`faults: round ${index + 1}: ${promised.length} answered 202, ${cutOff.length} cut off by kill -9`);

    const restartStartedMs = nowMs();
    const first = server;
    server = await startServer(context.root, settings, context.say);
    const restartMs = nowMs() - restartStartedMs;
    // The killed server's own folders (its unused database and outbox) go with its stop().
    await first.stop();
    const receivedBy = (email: string) => mailbox.received.filter((mail) => recipientOf(mail) === email).length;
    const readyAtMs = nowMs();
    let lastAfterRestartMs = 0;
    while (nowMs() - readyAtMs < DELIVERY_DEADLINE_MS && promised.some((email) => receivedBy(email) === 0)) {
      await sleep(250);
      lastAfterRestartMs = nowMs() - readyAtMs;
    }
    await sleep(SETTLE_MS);
    return {
      round: index + 1,
      sent: registrations,
      promised: promised.length,
      cutOff: cutOff.length,
      promisedOnce: promised.filter((email) => receivedBy(email) === 1).length,
      missing: promised.filter((email) => receivedBy(email) === 0).length,
      duplicated: emails.filter((email) => receivedBy(email) > 1).length,
      cutOffDelivered: cutOff.filter((email) => receivedBy(email) === 1).length,
      lastAfterRestartMs,
      restartMs,
    };
  } finally {
    await server?.stop();
    await mailbox.close();
    for (const folder of [dataDir, `${dataDir}.lock`]) fs.rmSync(folder, { recursive: true, force: true });
  }
}

export const faultsPart: Part = {
  id: "faults",
  title: PART_TITLES.faults,
  async run(context: PartContext): Promise<PartReport> {
    const rounds = context.smoke ? 1 : 3;
    const registrations = context.smoke ? 4 : 20;
    const rows: Row[] = [];
    for (let i = 0; i < rounds; i++) rows.push(await round(context, i, registrations));
    const promised = rows.reduce((sum, row) => sum + row.promised, 0);
    const once = rows.reduce((sum, row) => sum + row.promisedOnce, 0);
    const duplicated = rows.reduce((sum, row) => sum + row.duplicated, 0);
    const slowest = Math.max(...rows.map((row) => row.lastAfterRestartMs));
    const met = once === promised && duplicated === 0 && slowest <= DELIVERY_DEADLINE_MS;
    const markdown = [
      `Servers: \`node server.mjs\` (production build, one PGlite folder per round, \`REQUIRE_EMAIL_VERIFICATION=true\`, mail to a test SMTP server on loopback). Each round sends ${registrations} registrations at once, each from an address of its own, and kills the server with SIGKILL as soon as half have been answered; then starts it again on the same folder and counts, per address, the verification links the SMTP server receives, for up to ${DELIVERY_DEADLINE_MS / 1000} s after the restart is ready and ${SETTLE_MS / 1000} s more. Promised: answered 202 ("we sent you a link"). Cut off: no answer before the kill (nothing promised; at most one link allowed). Last delivery: after the restart was ready, for the promised ones.`,
      "",
      table(
        [
          "Round",
          "Sent",
          "Promised",
          "Cut off",
          "Promised, delivered once",
          "Missing",
          "More than once",
          "Cut off, delivered",
          "Restart",
          "Last delivery",
        ],
        rows.map((row) => [
          String(row.round),
          fmt.int(row.sent),
          fmt.int(row.promised),
          fmt.int(row.cutOff),
          `**${row.promisedOnce} of ${row.promised}**`,
          fmt.int(row.missing),
          fmt.int(row.duplicated),
          fmt.int(row.cutOffDelivered),
          fmt.ms(row.restartMs),
          fmt.ms(row.lastAfterRestartMs),
        ]),
      ),
      "",
      `Goal (issue 59): every promised mail delivered exactly once within a minute of the restart: ${met ? "**met**" : "**not met**"}.`,
    ].join("\n");
    return {
      markdown,
      headlines: [
        `16. kill -9 with mail promised: ${once} of ${promised} promised mails delivered once, ${duplicated} more than once, last ${fmt.ms(slowest)} after the restart`,
      ],
    };
  },
};
