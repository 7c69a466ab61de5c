import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ConfirmItsYou, type ConfirmWays } from "@/app/account/ConfirmItsYou";
import { Messages } from "@/app/components/Messages";

/** "Confirm it's you" as the server renders it; with no catalogue each text shows as its message id. */
function rendered(ways: ConfirmWays): string {
  const confirm = createElement(ConfirmItsYou, { formToken: "t", email: "owner@example.com", ways, reason: "why", onConfirmed: () => {} });
  // Messages is the provider alone (no hooks): called as a function, it takes its children as a prop.
  return renderToStaticMarkup(Messages({ value: { locale: "en", messages: {} }, children: confirm }));
}

describe("Confirm it's you offers the ways the account has", () => {
  it("a passkey-only account (no password) gets its passkey and no password field", () => {
    const html = rendered({ password: false, passkey: true });
    expect(html).not.toContain('type="password"');
    expect(html).not.toContain("account.confirm.password");
    expect(html).not.toContain("altcha-widget");
    expect(html).toContain("account.confirm.usePasskeyOnly");
  });

  it("an account with a password and a passkey gets both", () => {
    const html = rendered({ password: true, passkey: true });
    expect(html).toContain('type="password"');
    expect(html).toContain("account.confirm.usePasskey<");
  });

  it("an account with only a password gets no passkey button", () => {
    const html = rendered({ password: true, passkey: false });
    expect(html).toContain('type="password"');
    expect(html).not.toContain("account.confirm.usePasskey");
  });
});
