import { execFileSync } from "node:child_process";
import type { CDPSession, Page } from "@playwright/test";

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
