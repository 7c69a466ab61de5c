import { execFileSync } from "node:child_process";
import { expect, type CDPSession, type Page } from "@playwright/test";
import { signInThroughUi } from "./accounts";

/** The code an authenticator app shows at `atMs`, computed by oathtool (an independent TOTP implementation). */
export function codeAt(secret: string, atMs: number): string {
  return execFileSync("oathtool", ["--totp", "-b", secret, "-N", `@${Math.floor(atMs / 1000)}`], { encoding: "utf8" }).trim();
}

/** Chromium's virtual authenticator (CDP WebAuthn domain) on `page`, standing in for a phone or a security key. */
export async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** Signs `page` in as `email` (registered, no passkey yet) and adds a passkey from the account page with a virtual authenticator: its name. */
export async function addPasskeyOnAccountPage(page: Page, email: string): Promise<string> {
  await virtualAuthenticator(page);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/account$/);
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("passkey")).toHaveCount(1);
  return (await page.getByTestId("passkey").locator("strong").textContent())!;
}
