import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import { accountFormPost, createAccount, sessionWith, signedInBrowser } from "../helpers/browser";
import { pressLink, tokenIn } from "../helpers/email-links";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const CHANGE = "/api/account/email";

/**
 * "Change email" (issue 57, item 1) as an attacker would use it: a stolen session without a fresh
 * authentication, a replayed or doubled link, two changes confirmed at once, a foreign session,
 * and forged links. Each gets a clear 4xx and moves no address.
 */
export function emailChangeShapes(current: () => { gate: Gate }) {
  const gate = () => current().gate;

  describe("change email (issue 57)", () => {
    let sent: MailMessage[];
    const watchMail = () => {
      sent = [];
      vi.spyOn(gate().mailer, "send").mockImplementation((message: MailMessage) => void sent.push(message));
    };
    const addressOf = async (userId: string) => (await gate().prisma.user.findUniqueOrThrow({ where: { id: userId } })).email;
    /** Asks for a change from a fresh session and returns the link the new address got. */
    async function requested(from: string, to: string, cookie?: string) {
      const session = cookie ?? (await signedInBrowser(from, PASSWORD));
      watchMail();
      expect((await accountFormPost(gate(), CHANGE, session, { newEmail: to, json: "true" })).status).toBe(202);
      await gate().background.idle();
      return {
        session,
        confirm: tokenIn(
          sent.find((message) => message.to === to),
          "/confirm-email-change",
        ),
      };
    }

    beforeAll(async () => {
      for (const name of ["mail-stale", "mail-double", "mail-two", "mail-victim", "mail-intruder", "mail-forged"])
        await createAccount(gate(), `${name}@example.com`, PASSWORD);
    });
    afterEach(() => vi.restoreAllMocks());

    it("a stolen session without a fresh authentication mails nothing and spends no limit", async () => {
      const session = await signedInBrowser("mail-stale@example.com", PASSWORD);
      watchMail();
      vi.spyOn(gate(), "clock").mockReturnValue(Date.now() + 11 * 60_000);
      const json = await accountFormPost(gate(), CHANGE, session, { newEmail: "thief@example.com", json: "true" });
      expect(json.status).toBe(401);
      expect(await json.json()).toMatchObject({ error: "reauthentication_required" });
      const form = await accountFormPost(gate(), CHANGE, session, { newEmail: "thief@example.com" });
      expect(form.headers.get("location")).toBe("/account?notice=confirm_first");
      await gate().background.idle();
      expect(sent).toEqual([]);
      const key = gate().usernameKey("thief@example.com");
      vi.restoreAllMocks();
      expect((await gate().limiter.consume("emailChangeAddress", ["email", key])).remaining).toBe(2);
    });

    it("a link pressed twice at once moves the address once; its replay is the one invalid-link answer", async () => {
      const { id } = await gate().prisma.user.findUniqueOrThrow({ where: { email: "mail-double@example.com" } });
      const { confirm } = await requested("mail-double@example.com", "mail-double-new@example.com");
      const answers = await Promise.all([0, 1].map(() => pressLink("/api/email-change/confirm", confirm)));
      expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
      expect(await addressOf(id)).toBe("mail-double-new@example.com");
      const events = (await gate().events.recent(id, 50)).filter((event) => event.kind === "email_changed");
      expect(events).toHaveLength(1);
      const replay = await pressLink("/api/email-change/confirm", confirm);
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: "invalid_token" });
    });

    it("two requests, both links pressed: only the newest works, and the older changes nothing", async () => {
      const { id } = await gate().prisma.user.findUniqueOrThrow({ where: { email: "mail-two@example.com" } });
      const first = await requested("mail-two@example.com", "mail-two-a@example.com");
      const second = await requested("mail-two@example.com", "mail-two-b@example.com", first.session);
      const answers = await Promise.all([first.confirm, second.confirm].map((token) => pressLink("/api/email-change/confirm", token)));
      expect(answers.map((res) => res.status)).toEqual([400, 200]);
      expect(await addressOf(id)).toBe("mail-two-b@example.com");
    });

    it("another account's session cannot use the owner's form, and a forged or foreign link moves nothing", async () => {
      const victim = await signedInBrowser("mail-victim@example.com", PASSWORD);
      const intruder = await signedInBrowser("mail-intruder@example.com", PASSWORD);
      const { sessionFormToken } = await import("@/lib/http/form-token");
      const { sessionIdOf } = await import("../helpers/browser");
      const victimToken = sessionFormToken(gate().config.session.secret, await sessionIdOf(gate(), victim));
      const answers = [
        await accountFormPost(gate(), CHANGE, intruder, { newEmail: "x@example.com", formToken: victimToken }),
        await accountFormPost(gate(), CHANGE, victim, { newEmail: "x@example.com" }, { cookie: "" }),
        await accountFormPost(gate(), CHANGE, victim, { newEmail: "x@example.com" }, { "sec-fetch-site": "cross-site" }),
        await pressLink("/api/email-change/confirm", "A".repeat(43)),
        await pressLink("/api/email-change/undo", "x".repeat(600)),
      ];
      expect(answers.map((res) => res.status)).toEqual([403, 401, 403, 400, 400]);
      for (const res of answers) expect(res.headers.get("content-type")).toMatch(/application\/json/);
      // An undo link is no confirm link, and the reverse.
      const { confirm } = await requested("mail-forged@example.com", "mail-forged-new@example.com");
      expect((await pressLink("/api/email-change/undo", confirm)).status).toBe(400);
      expect(await gate().prisma.user.count({ where: { email: { in: ["mail-victim@example.com", "mail-forged@example.com"] } } })).toBe(2);
      expect((await sessionWith(victim)).body).toMatchObject({ user: { email: "mail-victim@example.com" } });
    });

    it("a link issued before a password change is dead: the request was made under the old one", async () => {
      const { session, confirm } = await requested("mail-intruder@example.com", "mail-intruder-new@example.com");
      const { id } = await gate().prisma.user.findUniqueOrThrow({ where: { email: "mail-intruder@example.com" } });
      await gate().sessions.raiseGeneration(id, null);
      expect((await pressLink("/api/email-change/confirm", confirm, session)).status).toBe(400);
      expect(await addressOf(id)).toBe("mail-intruder@example.com");
    });
  });
}
