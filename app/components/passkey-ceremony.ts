"use client";

type AuthenticationJSON = Awaited<ReturnType<(typeof import("@simplewebauthn/browser"))["startAuthentication"]>>;

/**
 * One passkey assertion: the server's options (a single-use challenge), the browser's WebAuthn
 * dialog, then the answer posted back. Returns the server's answer (or its refusal of the options),
 * or "cancelled" when no passkey was used. The WebAuthn client is fetched only now.
 */
export async function assertWithPasskey(
  options: () => Promise<Response>,
  answer: (credential: AuthenticationJSON) => Promise<Response>,
): Promise<Response | "cancelled"> {
  const { startAuthentication } = await import("@simplewebauthn/browser");
  const optionsRes = await options();
  if (!optionsRes.ok) return optionsRes;
  const body = (await optionsRes.json()) as { options: Parameters<typeof startAuthentication>[0]["optionsJSON"] };
  const credential = await startAuthentication({ optionsJSON: body.options }).catch(() => null);
  return credential ? answer(credential) : "cancelled";
}
