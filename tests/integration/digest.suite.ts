import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/app";
import { lastWholeWeek, runDigest } from "@/lib/lifecycle/digest";
import { WEEK_MS } from "@/lib/digest/tally";
import { readOutbox } from "@/lib/mail/outbox";
import { browserSignIn, createAccount } from "../helpers/browser";
import type { DatabaseKind } from "../helpers/each-database";
import { onEachDatabase } from "../helpers/each-database";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, runAdminCommand, servedGatehouse, testGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const PASSWORD = "the right passphrase";

/** The gate as it will be a week from now: the week the tests seeded is then the last whole one. */
const nextWeek = (gate: Gatehouse): Gatehouse => ({ ...gate, clock: () => Date.now() + WEEK_MS });

/**
 * The weekly digest from a week seeded through the real sign-in route: its figures, the mail in
 * the outbox, one mail a week across a restart and between two runners racing for the week.
 */
function digestSuite(label: string, kind: DatabaseKind, makeDatabase: () => Promise<TestDatabase>) {
  describe(`weekly digest on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    const contact = `it-contact+${kind}@client.example`;
    const settings = { DIGEST_EMAIL: contact, LOCKOUT_THRESHOLD: "3", NEW_DEVICE_CONFIRMATION: "off", BRAND_NAME: "Acme Login" };
    const digests = async (g: Gatehouse) =>
      (await readOutbox(g.config.mail.outboxDir, 500)).filter((entry) => entry.kind === "weekly_digest" && entry.to === contact);

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, settings);

      // An attack on one account from one network: three wrong passwords lock it, a fourth is refused.
      await createAccount(gate, "guessed@example.com", PASSWORD);
      for (let i = 0; i < 4; i++) await browserSignIn("guessed@example.com", "wrong guess", { address: `203.0.113.${10 + i}` });
      // A takeover as the digest counts it: a sign-in from a new browser and network, then the operator ends its sessions.
      await createAccount(gate, "taken@example.com", PASSWORD);
      expect((await browserSignIn("taken@example.com", PASSWORD, { address: "198.51.100.4", userAgent: FIREFOX })).status).toBe(200);
      expect((await browserSignIn("taken@example.com", PASSWORD, { address: "192.0.2.50", userAgent: CHROME })).status).toBe(200);
      await runAdminCommand(gate, "revoke-sessions", "taken@example.com");
      // The owner of a third account signs in twice from where they always do: no takeover.
      await createAccount(gate, "owner@example.com", PASSWORD);
      for (let i = 0; i < 2; i++) await browserSignIn("owner@example.com", PASSWORD, { address: "198.51.100.9", userAgent: FIREFOX });
    }, 300_000);

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    it("mails the seeded week's figures to the contact, through the spool and the outbox", async () => {
      expect(await runDigest(nextWeek(gate))).toBe("sent");
      await gate.mailer.idle();
      const [mail, ...more] = await digests(gate);
      expect(more).toEqual([]);
      expect(mail!.subject).toMatch(/^Acme Login: sign-ins from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}$/);
      const text = mail!.text;
      // 4 guesses + 4 right passwords (two for the taken account, two for the owner) = 8 answers of the sign-in route.
      expect(text).toContain("Sign-in attempts: 8");
      expect(text).toContain("wrong email or password: 3");
      expect(text).toContain("the username locked after wrong passwords: 1");
      expect(text).toContain("Accounts locked: 1");
      expect(text).toContain("New devices asked to confirm by a mailed code: 0");
      expect(text).toContain("Accounts taken over: 1");
      // The attacking network, shortened; the owners' networks are not attackers.
      expect(text).toContain("• 203.0.113.x: 4");
      expect(text).not.toContain("198.51.100");
      expect(text).not.toContain("192.0.2");
      expect(text).toContain("accounts look taken over");
      // Pseudonymous: no account's address, no full network address.
      expect(text).not.toContain("@example.com");
      expect(text).not.toMatch(/203\.0\.113\.1\d/);
      expect(await gate.prisma.mailSpool.count()).toBe(0);
    });

    it("previews the same mail with digest --dry-run, sending nothing", async () => {
      const preview = await runAdminCommand(nextWeek(gate), "digest", "--dry-run");
      expect(preview).toContain(`To: ${contact}`);
      expect(preview).toContain("Accounts taken over: 1");
      await expect(runAdminCommand(gate, "digest")).rejects.toThrow(/--dry-run/);
      expect(await digests(gate)).toHaveLength(1);
    });

    it("sends one mail a week across a restart", async () => {
      expect(await runDigest(nextWeek(gate))).toBe("already");
      await closeServed(gate);
      gate = await servedGatehouse(database.url, settings);
      expect(await runDigest(nextWeek(gate))).toBe("already");
      await gate.mailer.idle();
      expect(await digests(gate)).toHaveLength(1);
      expect(await gate.prisma.digestSent.count()).toBe(1);
    });

    it("sends one mail when two runners race for the next week", async () => {
      const later = (g: Gatehouse): Gatehouse => ({ ...g, clock: () => Date.now() + 2 * WEEK_MS });
      // On PostgreSQL a second instance of its own; the embedded database has one process.
      const other = kind === "postgres" ? await testGatehouse(database.url, settings) : gate;
      try {
        const outcomes = await Promise.all([runDigest(later(gate)), runDigest(later(other)), runDigest(later(gate))]);
        expect(outcomes.filter((outcome) => outcome === "sent")).toHaveLength(1);
        await gate.mailer.idle();
        await other.mailer.idle();
      } finally {
        if (other !== gate) await other.close();
      }
      expect(await digests(gate)).toHaveLength(2);
      expect(await gate.prisma.digestSent.count()).toBe(2);
      const weeks = (await gate.prisma.digestSent.findMany({ orderBy: { weekStart: "asc" } })).map((row) => row.weekStart.getTime());
      expect(weeks).toEqual([lastWholeWeek(Date.now() + WEEK_MS), lastWholeWeek(Date.now() + 2 * WEEK_MS)]);
    });
  });
}

onEachDatabase("weekly digest", ({ label, kind, makeDatabase }) => digestSuite(label, kind, makeDatabase));
