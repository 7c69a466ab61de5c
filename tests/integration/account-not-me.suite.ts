import { NextRequest } from "next/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import { refreshTokens, sessionWith, signedInBrowser, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { pressLink, tokenIn } from "../helpers/email-links";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { servedForSuite } from "../helpers/served-suite";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";

/**
 * "This wasn't me" (issue 57, item 7) through the real routes and a real database: the new-device
 * mail's link ends that session (or the app's token family) at once, forgets its device, marks
 * the username under attack; it works once, and tells whoever else opens it nothing.
 */
export function accountNotMeSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`this wasn't me on ${label}`, () => {
    const served = servedForSuite(
      makeDatabase,
      ["notme-browser", "notme-app", "notme-twice"].map((name) => `${name}@example.com`),
      PASSWORD,
    );
    let gate: Gate;
    let sent: MailMessage[];
    beforeAll(() => {
      gate = served.gate;
    });
    afterEach(() => vi.restoreAllMocks());

    function watchMail() {
      sent = [];
      vi.spyOn(gate.mailer, "send").mockImplementation((message: MailMessage) => void sent.push(message));
    }
    /** The "This wasn't me" link of the last new-device mail. */
    async function notMeLink(): Promise<string> {
      await gate.background.idle();
      const mail = sent.filter((message) => message.kind === "new_device_sign_in").at(-1);
      expect(mail?.subject).toBe("New sign-in to your Gatehouse account");
      return tokenIn(mail, "/not-me");
    }
    const underAttack = async (email: string) =>
      (await gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey(email) } }))?.lastFailedAt != null;

    it("ends that browser's session and forgets its device at once; the owner's session stays; the username is under attack", async () => {
      const email = "notme-browser@example.com";
      const owner = await signedInBrowser(email, PASSWORD);
      watchMail();
      const stranger = await signedInBrowser(email, PASSWORD);
      const token = await notMeLink();
      const devicesBefore = (await gate.devices.listOf(gate.usernameKey(email), gate.clock())).length;

      const res = await pressLink("/api/not-me", token);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({ status: "session_ended" });
      expect(body).not.toContain(email);
      expect((await sessionWith(stranger)).body).toEqual({});
      expect((await sessionWith(owner)).body).toMatchObject({ user: { email } });
      expect((await gate.devices.listOf(gate.usernameKey(email), gate.clock())).length).toBe(devicesBefore - 1);
      expect(await underAttack(email)).toBe(true);
      const { id } = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      expect((await gate.events.recent(id, 50)).map((event) => event.kind)).toContain("session_ended_not_me");
    });

    it("ends an app's token family: its refresh token and its access token stop working", async () => {
      const email = "notme-app@example.com";
      await signedInBrowser(email, PASSWORD);
      watchMail();
      const tokens = (await (await tokenSignIn(email, PASSWORD)).json()) as { access_token: string; refresh_token: string };
      const token = await notMeLink();
      expect((await pressLink("/api/not-me", token)).status).toBe(200);
      const me = await (
        await import("@/app/api/v1/me/route")
      ).GET(
        new NextRequest("http://localhost/api/v1/me", {
          headers: { authorization: `Bearer ${tokens.access_token}`, [PEER_HEADER]: freshAddress() },
        }),
      );
      expect(me.status).toBe(401);
      expect((await refreshTokens(tokens.refresh_token)).status).toBe(401);
    });

    it("works once: pressed twice at once, one ends the session; a replay, a forged or an expired link is the one invalid-link answer", async () => {
      const email = "notme-twice@example.com";
      await signedInBrowser(email, PASSWORD);
      watchMail();
      await signedInBrowser(email, PASSWORD);
      const token = await notMeLink();
      const answers = await Promise.all([0, 1].map(() => pressLink("/api/not-me", token)));
      expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
      const replay = await pressLink("/api/not-me", token);
      const forged = await pressLink("/api/not-me", "A".repeat(43));
      expect([replay.status, forged.status]).toEqual([400, 400]);
      expect(await replay.text()).toBe(await forged.text());
      // Expired with the session it was about.
      const { issueNotMeLink } = await import("@/lib/users/not-me");
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      const late = await issueNotMeLink(gate.prisma, user, { sessionId: "x".repeat(22), deviceId: "none", lifetimeMs: 60_000 }, Date.now());
      vi.spyOn(gate, "clock").mockReturnValue(Date.now() + 61_000);
      expect((await pressLink("/api/not-me", late)).status).toBe(400);
    });
  });
}

onEachDatabase("this wasn't me", ({ label, makeDatabase }) => accountNotMeSuite(label, makeDatabase));
