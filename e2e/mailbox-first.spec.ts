import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { request as playwrightRequest } from "@playwright/test";
import { PASSWORD, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { mailTo } from "./helpers/outbox";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

const CODE_MAIL = /sign in to .* on a new device/i;

// Issue 55: the office at 9 am beside a guest on its network. After the guest's 5 wrong passwords
// from the office address, a first-day employee's new browser proves the mailbox before the password
// is checked: the page asks for the mailed code, then sends the same password again from the browser
// the code made a known device. A server of its own with the shipped limits.
test.describe("mailbox first at an office a guest sprayed", () => {
  let instance: Instance | undefined;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-mailbox-"));
    instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${dataDir}` });
  });

  test.afterAll(async () => {
    await instance?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("a first-day employee gets in by the mailed code, and the guest's next guess reaches no hash", async ({ page, clientAddress }) => {
    test.setTimeout(90_000);
    const baseURL = instance!.baseURL;
    const email = uniqueEmail("first-day");
    const setup = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { "X-Forwarded-For": "10.252.1.1" } });
    const guest = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { "X-Forwarded-For": clientAddress } });
    try {
      expect((await registerApi(setup, email, PASSWORD)).status()).toBe(202);
      // The guest at the office address (the fixture's): five wrong passwords at five usernames.
      for (let i = 0; i < 5; i++) expect((await signInApi(guest, uniqueEmail(`sprayed-${i}`), "Summer2026!")).kind).toBe("invalid");
      // The sixth is answered mailbox first: a pending step, and the body says no password was checked.
      const sixth = await signInApi(guest, uniqueEmail("sprayed-6"), "Summer2026!");
      expect(sixth.status).toBe(401);
      expect(sixth.body).toMatchObject({ error: "device_confirmation_required", mailboxFirst: true });

      // The employee's browser at the same address: the step asks for the code first.
      await page.goto(`${baseURL}/sign-in?callbackUrl=%2Faccount`);
      await signInThroughUi(page, email, PASSWORD);
      await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
      await expect(page.getByText(/proves? .*mail|show.* it can read the account's email/i)).toBeVisible();
      const axe = await new AxeBuilder({ page }).analyze();
      expect(axe.violations.map((violation) => violation.id)).toEqual([]);

      const mail = await mailTo(email, CODE_MAIL);
      const code = /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1];
      expect(code).toMatch(/^\d{6}$/);
      await page.getByLabel("Code", { exact: true }).fill(code!);
      await page.getByRole("button", { name: "Verify" }).click();
      // The page sends the password again by itself, now from a known device: signed in.
      await expect(page).toHaveURL(/\/account$/, { timeout: 20_000 });
      await expect(page.getByTestId("account-email")).toHaveText(email);
    } finally {
      await setup.dispose();
      await guest.dispose();
    }
  });
});
