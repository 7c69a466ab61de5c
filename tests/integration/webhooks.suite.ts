import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/app";
import { startWebhookDispatcher, type WebhookDispatcher } from "@/lib/webhooks/dispatcher";
import { browserSignIn, createAccount } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";
import { onEachDatabase } from "../helpers/each-database";

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
type Answer = (res: ServerResponse) => void;

/** A real HTTP receiver on 127.0.0.1: what it received, and the answers it gives, in order (then 204). */
async function receiver(): Promise<{ url: string; received: Received[]; answers: Answer[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const answers: Answer[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      (answers.shift() ?? ((r: ServerResponse) => r.writeHead(204).end()))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/security`,
    received,
    answers,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const secretOf = () => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * Security webhooks through the real sign-in route and a real receiver: queued in the statement
 * that records the event, delivered signed (verified here with the standardwebhooks package),
 * retried after a 500, kept across a restart, and never on the sign-in's path.
 */
export function webhooksSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`security webhooks on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let hook: Awaited<ReturnType<typeof receiver>>;
    let dispatcher: WebhookDispatcher;
    const secret = secretOf();
    const PASSWORD = "the right passphrase";
    const settings = () => ({
      SECURITY_WEBHOOK_URL: hook.url,
      SECURITY_WEBHOOK_SECRET: secret,
      LOCKOUT_THRESHOLD: "3",
      NEW_DEVICE_CONFIRMATION: "off",
    });
    // The dispatcher's clock: moved forward by the tests to reach a retry's time.
    let offsetMs = 0;
    const clock = () => Date.now() + offsetMs;
    const dispatch = (g: Gatehouse, timeoutMs = 2_000) =>
      // Polled by hand (runOnce): an hour between the dispatcher's own passes.
      startWebhookDispatcher(
        { prisma: g.prisma, settings: g.config.webhooks!, clock, log: g.log, metrics: g.metrics },
        { pollMs: 3_600_000, timeoutMs },
      );

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      hook = await receiver();
      gate = await servedGatehouse(database.url, settings());
    });

    afterAll(async () => {
      await dispatcher?.stop();
      await closeServed(gate);
      await hook?.close();
      await database?.dispose();
    });

    beforeEach(async () => {
      await dispatcher?.stop();
      await gate.prisma.webhookOutbox.deleteMany({});
      offsetMs = 0;
      hook.received.length = 0;
      hook.answers.length = 0;
    });

    const outbox = () => gate.prisma.webhookOutbox.findMany({ orderBy: { createdAt: "asc" } });

    it("queues a lock with its sign-in and delivers it signed, pseudonymous and verifiable", async () => {
      const email = "locked@example.com";
      const userId = await createAccount(gate, email, PASSWORD);
      for (let i = 0; i < 3; i++) expect((await browserSignIn(email, "wrong guess", { address: `203.0.113.${10 + i}` })).status).toBe(401);
      const queued = await outbox();
      expect(queued.map((row) => row.type)).toEqual(["account.locked"]);

      dispatcher = dispatch(gate);
      await dispatcher.runOnce();
      expect(await outbox()).toEqual([]);
      expect(hook.received).toHaveLength(1);
      const [delivery] = hook.received;
      expect(delivery!.path).toBe("/hooks/security");
      expect(delivery!.headers["webhook-id"]).toBe(queued[0]!.id);
      const verified = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);
      expect(verified).toMatchObject({ type: "account.locked", data: { account: userId, change: "locked", network: "203.0.113.x" } });
      // Pseudonymous: neither the address nor the password nor the full network address.
      expect(delivery!.body).not.toContain("locked@example.com");
      expect(delivery!.body).not.toContain("wrong guess");
      expect(delivery!.body).not.toMatch(/203\.0\.113\.1\d/);
    });

    it("refuses a forged signature, a tampered body and a replayed timestamp at the receiver", async () => {
      await createAccount(gate, "forged@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("forged@example.com", "wrong guess", { address: `203.0.113.${20 + i}` });
      dispatcher = dispatch(gate);
      await dispatcher.runOnce();
      const [delivery] = hook.received;
      const headers = delivery!.headers as Record<string, string>;
      expect(() => new Webhook(secretOf()).verify(delivery!.body, headers)).toThrow();
      expect(() => new Webhook(secret).verify(delivery!.body.replace("account.locked", "account.unlocked"), headers)).toThrow();
      const forged = new Webhook(secretOf()).sign(headers["webhook-id"]!, new Date(), delivery!.body);
      expect(() => new Webhook(secret).verify(delivery!.body, { ...headers, "webhook-signature": forged })).toThrow();
      const old = Math.floor(Date.now() / 1000) - 3_600;
      const stale = new Webhook(secret).sign(headers["webhook-id"]!, new Date(old * 1000), delivery!.body);
      expect(() =>
        new Webhook(secret).verify(delivery!.body, { ...headers, "webhook-timestamp": String(old), "webhook-signature": stale }),
      ).toThrow();
    });

    it("retries after a 500 with backoff, under the same webhook-id, until a 204", async () => {
      await createAccount(gate, "retry@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("retry@example.com", "wrong guess", { address: `203.0.113.${30 + i}` });
      const [queued] = await outbox();
      hook.answers.push((res) => res.writeHead(500).end("oops"));
      const failedBefore = (await gate.metrics.webhookDeliveries.get()).values.find((v) => v.labels.outcome === "failed")?.value ?? 0;
      dispatcher = dispatch(gate);
      await dispatcher.runOnce();
      const [waiting] = await outbox();
      expect(waiting).toMatchObject({ id: queued!.id, attempts: 1, claimedUntil: null });
      // Not due again at once: the backoff (5 s less up to a fifth) holds it.
      expect(waiting!.nextAttemptAt.getTime() - clock()).toBeGreaterThan(3_000);
      await dispatcher.runOnce();
      expect(hook.received).toHaveLength(1);
      expect((await gate.metrics.webhookBacklog.get()).values[0]!.value).toBe(1);

      offsetMs += 10_000;
      await dispatcher.runOnce();
      expect(await outbox()).toEqual([]);
      expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual([queued!.id, queued!.id]);
      for (const delivery of hook.received)
        expect(() => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
      const values = (await gate.metrics.webhookDeliveries.get()).values;
      expect(values.find((v) => v.labels.outcome === "failed")?.value).toBe(failedBefore + 1);
      expect((await gate.metrics.webhookBacklog.get()).values[0]!.value).toBe(0);
    });

    it("cuts off a receiver that hangs, redirects, or answers a huge body, and retries each", async () => {
      await createAccount(gate, "cutoff@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("cutoff@example.com", "wrong guess", { address: `203.0.113.${40 + i}` });
      dispatcher = dispatch(gate, 300);
      const attempt = async (answer: Answer) => {
        hook.answers.push(answer);
        offsetMs += 7 * 3_600_000;
        const started = performance.now();
        await dispatcher.runOnce();
        return performance.now() - started;
      };
      // No answer at all: the deadline (300 ms here) ends it.
      expect(await attempt(() => {})).toBeLessThan(5_000);
      // A redirect elsewhere: not followed.
      await attempt((res) => res.writeHead(307, { location: "/elsewhere" }).end());
      // 50 MB refused: never read.
      await attempt((res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(1024 * 1024, 120);
        let sent = 0;
        const more = () => {
          while (sent < 50 && res.write(chunk)) sent++;
          if (sent < 50) res.once("drain", more);
          else res.end();
        };
        more();
      });
      expect(hook.received.map((r) => r.path)).toEqual(["/hooks/security", "/hooks/security", "/hooks/security"]);
      const [waiting] = await outbox();
      expect(waiting).toMatchObject({ attempts: 3 });
      // The next due attempt (a 204) delivers it.
      offsetMs += 7 * 3_600_000;
      await dispatcher.runOnce();
      expect(await outbox()).toEqual([]);
    });

    it("never holds a sign-in up: a receiver that hangs while the owner signs in", async () => {
      await createAccount(gate, "owner@example.com", PASSWORD);
      await createAccount(gate, "busy@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("busy@example.com", "wrong guess", { address: `203.0.113.${50 + i}` });
      hook.answers.push(() => {});
      dispatcher = dispatch(gate, 5_000);
      const delivering = dispatcher.runOnce();
      const started = performance.now();
      const res = await browserSignIn("owner@example.com", PASSWORD);
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2_500);
      await delivering;
    });

    it("tells of an operator's unlock and deletion: the account's change and the admin action, with the operator's name", async () => {
      const { runAdminRequest } = await import("@/lib/ops/admin-request");
      const userId = await createAccount(gate, "operated@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("operated@example.com", "wrong guess", { address: `203.0.113.${70 + i}` });
      await gate.prisma.webhookOutbox.deleteMany({});
      expect(await runAdminRequest(gate, { command: "unlock", args: ["operated@example.com"], operator: "ada" }, "live")).toMatchObject({
        ok: true,
      });
      expect(
        await runAdminRequest(gate, { command: "delete-user", args: ["operated@example.com"], operator: "ada" }, "offline"),
      ).toMatchObject({
        ok: true,
      });
      dispatcher = dispatch(gate);
      await dispatcher.runOnce();
      const bodies = hook.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>));
      const key = gate.usernameKey("operated@example.com");
      expect(bodies).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: "account.unlocked",
            data: expect.objectContaining({ account: userId, change: "admin_unlocked" }),
          }),
          expect.objectContaining({
            type: "admin.action",
            data: { operator: "ada", command: "unlock", accountKey: key, channel: "live", outcome: "done" },
          }),
          expect.objectContaining({ type: "account.deleted", data: { account: userId, change: "admin_deleted" } }),
          expect.objectContaining({
            type: "admin.action",
            data: { operator: "ada", command: "delete-user", accountKey: key, channel: "offline", outcome: "done" },
          }),
        ]),
      );
      expect(bodies).toHaveLength(4);
      expect(hook.received.map((r) => r.body).join()).not.toContain("operated@example.com");
    });

    it("delivers what a stopped instance had queued, after a restart on the same database", async () => {
      await createAccount(gate, "restart@example.com", PASSWORD);
      for (let i = 0; i < 3; i++) await browserSignIn("restart@example.com", "wrong guess", { address: `203.0.113.${60 + i}` });
      const [queued] = await outbox();
      expect(hook.received).toEqual([]);
      // The instance goes away before any delivery (no dispatcher ran), another starts.
      await closeServed(gate);
      gate = await servedGatehouse(database.url, settings());
      dispatcher = dispatch(gate);
      await dispatcher.runOnce();
      expect(hook.received.map((r) => r.headers["webhook-id"])).toEqual([queued!.id]);
      expect(await outbox()).toEqual([]);
    });
  });
}

onEachDatabase("security webhooks", ({ label, makeDatabase }) => webhooksSuite(label, makeDatabase));
