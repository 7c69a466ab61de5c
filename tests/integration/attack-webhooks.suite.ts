import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/app";
import { AT_RISK_WINDOW_MS } from "@/lib/factors/device-confirmation";
import { ADDRESS_CALM_AFTER_MS, EVENTS_PER_RUN, startAttackWatch } from "@/lib/webhooks/attacks";
import { browserSignIn, createAccount } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { onEachDatabase } from "../helpers/each-database";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";

/**
 * username.under_attack / username.calm and address.under_attack / address.calm: queued by the
 * attack watch (the jobs runner) in the webhook outbox, once per transition, bounded per run.
 */
function attackWebhooksSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`attack webhooks on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let offsetMs = 0;
    const watch = () =>
      startAttackWatch({
        sql: gate.sql,
        addressWatch: gate.addressWatch!,
        clock: () => Date.now() + offsetMs,
        onError: (error) => {
          throw error;
        },
      });
    const outbox = async () =>
      (await gate.prisma.webhookOutbox.findMany({ orderBy: { createdAt: "asc" } })).map((row) => ({
        type: row.type,
        body: JSON.parse(row.payload) as { type: string; timestamp: string; data: Record<string, string> },
      }));

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, {
        SECURITY_WEBHOOK_URL: "http://127.0.0.1:9/hooks",
        SECURITY_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
        NEW_DEVICE_CONFIRMATION: "off",
        RATE_LIMIT_SIGN_IN_ADDRESS: "3/15m",
      });
    }, 120_000);

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    beforeEach(async () => {
      offsetMs = 0;
      await gate.prisma.webhookOutbox.deleteMany({});
    });

    it("tells of a username under attack once, and calm once its mark expires", async () => {
      const email = "watched@example.com";
      await createAccount(gate, email, "the right passphrase");
      for (let i = 0; i < 2; i++) await browserSignIn(email, "wrong guess", { address: `198.51.100.${20 + i}` });
      const runner = watch();
      try {
        await runner.runOnce();
        await runner.runOnce();
        const key = gate.usernameKey(email);
        const first = (await outbox()).filter((event) => event.type.startsWith("username."));
        expect(first).toEqual([
          { type: "username.under_attack", body: expect.objectContaining({ type: "username.under_attack", data: { usernameKey: key } }) },
        ]);
        expect(JSON.stringify(first)).not.toContain(email);
        await gate.prisma.webhookOutbox.deleteMany({});
        offsetMs = AT_RISK_WINDOW_MS + 1_000;
        await runner.runOnce();
        await runner.runOnce();
        expect((await outbox()).filter((event) => event.type.startsWith("username.")).map((event) => event.type)).toEqual([
          "username.calm",
        ]);
      } finally {
        await runner.stop();
      }
    });

    it("says calm when the owner clears the mark, and when a reset forgets the username", async () => {
      const runner = watch();
      try {
        for (const email of ["cleared@example.com", "reset@example.com"]) {
          await createAccount(gate, email, "the right passphrase");
          await browserSignIn(email, "wrong guess", { address: "198.51.100.30" });
        }
        await runner.runOnce();
        await gate.prisma.webhookOutbox.deleteMany({});
        await gate.lockouts.clearUnderAttack(gate.usernameKey("cleared@example.com"));
        await gate.lockouts.forget(gate.usernameKey("reset@example.com"), Date.now());
        // The reset's calm is queued with the forgetting itself; the cleared mark's by the next run.
        expect((await outbox()).map((event) => event.body.data.usernameKey)).toEqual([gate.usernameKey("reset@example.com")]);
        await runner.runOnce();
        expect((await outbox()).map((event) => event.type)).toEqual(["username.calm", "username.calm"]);
      } finally {
        await runner.stop();
      }
    });

    it("bounds a username spray: EVENTS_PER_RUN events and one summary a run", async () => {
      const nowMs = Date.now();
      const extra = 7;
      for (let i = 0; i < EVENTS_PER_RUN + extra; i++)
        await gate.sql.run(
          `INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt", "lastFailedAt")
           VALUES ($1, 1, TIMESTAMP 'epoch' + $2::bigint * INTERVAL '1 millisecond', TIMESTAMP 'epoch' + $2::bigint * INTERVAL '1 millisecond')`,
          [`spray-${i}`, nowMs],
        );
      const runner = watch();
      try {
        await runner.runOnce();
        const events = await outbox();
        expect(events.filter((event) => event.type === "username.under_attack")).toHaveLength(EVENTS_PER_RUN);
        const summaries = events.filter((event) => event.type === "attack.summary");
        expect(summaries.map((event) => event.body.data)).toEqual([{ event: "username.under_attack", more: String(extra) }]);
      } finally {
        await runner.stop();
      }
    });

    it("tells of an address whose sign-in budget is spent, by its network, and calm after the window", async () => {
      const address = "203.0.113.77";
      const answers: number[] = [];
      for (let i = 0; i < 5; i++) answers.push((await browserSignIn(`nobody${i}@example.com`, "wrong guess", { address })).status);
      expect(answers).toContain(429);
      const runner = watch();
      try {
        await runner.runOnce();
        await runner.runOnce();
        const attacked = (await outbox()).filter((event) => event.type.startsWith("address."));
        expect(attacked).toEqual([{ type: "address.under_attack", body: expect.objectContaining({ data: { network: "203.0.113.x" } }) }]);
        await gate.prisma.webhookOutbox.deleteMany({});
        offsetMs = ADDRESS_CALM_AFTER_MS + 1_000;
        await runner.runOnce();
        expect((await outbox()).filter((event) => event.type.startsWith("address."))).toEqual([
          { type: "address.calm", body: expect.objectContaining({ data: { network: "203.0.113.x" } }) },
        ]);
      } finally {
        await runner.stop();
      }
    });
  });
}

onEachDatabase("attack webhooks", ({ label, makeDatabase }) => attackWebhooksSuite(label, makeDatabase));
