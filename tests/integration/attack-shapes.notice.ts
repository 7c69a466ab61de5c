import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import { createAccount, sessionWith, signedInBrowser } from "../helpers/browser";
import { pressLink, tokenIn } from "../helpers/email-links";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";

/**
 * The new-device notice as an intruder would hide behind it: a sign-in from a second new device
 * just after the owner's own. Each new device's sign-in is mailed with its own "This wasn't me"
 * (decision 0041), and a flood of them still cannot fill the owner's mailbox.
 */
export function noticeShapes(current: () => { gate: Gate }) {
  const gate = () => current().gate;

  describe("the new-device notice (decision 0041)", () => {
    let sent: MailMessage[];

    beforeAll(async () => {
      for (const name of ["notice-owner", "notice-flood"]) await createAccount(gate(), `${name}@example.com`, PASSWORD);
    });

    afterEach(() => vi.restoreAllMocks());

    function watchMail() {
      sent = [];
      vi.spyOn(gate().mailer, "send").mockImplementation((message: MailMessage) => void sent.push(message));
    }
    async function noticesSent(): Promise<MailMessage[]> {
      await gate().background.idle();
      return sent.filter((message) => message.kind === "new_device_sign_in");
    }

    it("an intruder's new device right after the owner's own is mailed, and its link ends that sign-in only", async () => {
      const email = "notice-owner@example.com";
      // The account's first sign-in is no news; the owner's second device is.
      const first = await signedInBrowser(email, PASSWORD);
      watchMail();
      const ownerA = await signedInBrowser(email, PASSWORD);
      expect(await noticesSent()).toHaveLength(1);
      const intruderB = await signedInBrowser(email, PASSWORD);
      const notices = await noticesSent();
      expect(notices).toHaveLength(2);

      const res = await pressLink("/api/not-me", tokenIn(notices[1], "/not-me"));
      expect(res.status).toBe(200);
      expect((await sessionWith(intruderB)).body).toEqual({});
      expect((await sessionWith(ownerA)).body).toMatchObject({ user: { email } });
      expect((await sessionWith(first)).body).toMatchObject({ user: { email } });
    });

    it("a flood of new devices mails no more than the account's hourly cap", async () => {
      const email = "notice-flood@example.com";
      await signedInBrowser(email, PASSWORD);
      watchMail();
      const cap = gate().config.rateLimit.policies.newDeviceNotices.algorithm;
      const perHour = "bandwidths" in cap ? cap.bandwidths[0]!.capacity : Number.NaN;
      for (let i = 0; i <= perHour; i++) await signedInBrowser(email, PASSWORD);
      expect(await noticesSent()).toHaveLength(perHour);
    });
  });
}
