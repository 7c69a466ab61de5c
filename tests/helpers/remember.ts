import { NextRequest } from "next/server";
import { expect } from "vitest";
import { totpCodeAt } from "@/lib/factors/totp";
import { accountFormPost, altchaPayload, browserSignIn, createAccount, sessionIdOf, sessionPairOf, signedInBrowser } from "./browser";
import { freshAddress, PEER_HEADER } from "./peer";
import { pendingCookieOf, secondStepPost } from "./pending";

type Gate = import("@/lib/app").Gatehouse;

export const REMEMBER_PASSWORD = "the right passphrase";
const STEP_MS = 30_000;

/** One browser's own cookies, as `name=value` pairs: its known device and its "Remember this browser" secret. */
export type Jar = { device: string | null; remember: string | null; session: string | null };

const pairOf = (res: Response, name: RegExp) =>
  res.headers
    .getSetCookie()
    .find((cookie) => name.test(cookie))
    ?.split(";")[0] ?? null;

/** The jar after a response: the cookies it set replace the old ones (an emptied one is gone). */
export function jarAfter(jar: Jar, res: Response): Jar {
  const take = (old: string | null, name: RegExp) => {
    const set = pairOf(res, name);
    if (set === null) return old;
    return set.endsWith("=") ? null : set;
  };
  return {
    device: take(jar.device, /^(__Host-)?gatehouse-device=/),
    remember: take(jar.remember, /^(__Host-)?gatehouse-remember=/),
    session: sessionPairOf(res) ?? jar.session,
  };
}

export const emptyJar = (): Jar => ({ device: null, remember: null, session: null });
export const cookieOf = (jar: Jar) => [jar.device, jar.remember].filter(Boolean).join("; ");

/** The remember secret in a jar (the value only). */
export const rememberValue = (jar: Jar) => jar.remember?.split("=")[1] ?? null;

/** An account with an authenticator app turned on from the account page; its secret and recovery codes. */
export async function ownerWithApp(gate: Gate, email: string, password = REMEMBER_PASSWORD) {
  await createAccount(gate, email, password);
  const cookie = await signedInBrowser(email, password);
  const post = (path: string, fields: Record<string, string> = {}) => accountFormPost(gate, path, cookie, fields);
  expect((await post("/api/account/totp/setup")).status).toBe(200);
  const userId = (await gate.prisma.user.findUniqueOrThrow({ where: { email } })).id;
  const secret = (await gate.factors.totpBeingSetUp(userId, await sessionIdOf(gate, cookie), Date.now()))!;
  // Not within 5 s of a step's edge: the codes below are this step's and the next.
  const intoStepMs = Date.now() % STEP_MS;
  if (intoStepMs > STEP_MS - 5_000) await new Promise((resolve) => setTimeout(resolve, STEP_MS - intoStepMs + 100));
  const on = await post("/api/account/totp/confirm", { code: totpCodeAt(secret, Date.now() - STEP_MS) });
  expect(on.status, await on.clone().text()).toBe(200);
  const { recoveryCodes } = (await on.json()) as { recoveryCodes: string[] };
  return { userId, secret, recoveryCodes };
}

/** A password sign-in from the browser holding `jar`: the answer and the jar after it. */
export async function passwordFrom(jar: Jar, email: string, password = REMEMBER_PASSWORD) {
  const res = await browserSignIn(email, password, { cookie: cookieOf(jar) });
  expect(res.status, await res.clone().text()).not.toBe(503);
  return { res, jar: jarAfter(jar, res), pending: pendingCookieOf(res) };
}

/**
 * The second step from the browser holding `jar` and its pending sign-in: the answer and the jar
 * after it. `body` is the step's JSON (`{ code }`, `{ recoveryCode }`, with `remember`).
 */
export async function stepFrom(jar: Jar, pending: string | null, body: Record<string, unknown>, path?: string) {
  const cookie = [pending, cookieOf(jar)].filter(Boolean).join("; ");
  const res = await secondStepPost(cookie || null, body, path);
  return { res, jar: jarAfter(jar, res) };
}

/** A new browser that passes the password and the app's code with "Remember this browser" ticked. */
export async function rememberedBrowser(email: string, secret: Uint8Array, atMs = Date.now()) {
  const first = await passwordFrom(emptyJar(), email);
  expect(first.res.status).toBe(401);
  const step = await stepFrom(first.jar, first.pending, { code: totpCodeAt(secret, atMs), remember: true });
  expect(step.res.status, await step.res.clone().text()).toBe(200);
  expect(step.jar.remember).not.toBeNull();
  return step.jar;
}

/** The password change form from the browser holding `jar` (its session, its device cookie). */
export async function changePasswordFrom(gate: Gate, jar: Jar, currentPassword: string, newPassword: string) {
  const { decode } = await import("next-auth/jwt");
  const { sessionFormToken } = await import("@/lib/http/form-token");
  const claims = await decode({ token: jar.session!.split("=").slice(1).join("="), secret: gate.config.session.secret });
  const formToken = sessionFormToken(gate.config.session.secret, claims!.sid as string);
  const body = new URLSearchParams({ formToken, altcha: await altchaPayload(), currentPassword, newPassword });
  const res = await (
    await import("@/app/api/account/password/route")
  ).POST(
    new NextRequest("http://localhost/api/account/password", {
      method: "POST",
      headers: {
        cookie: [jar.session, cookieOf(jar)].filter(Boolean).join("; "),
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        [PEER_HEADER]: freshAddress(),
      },
      body: body.toString(),
    }),
  );
  return { res, jar: jarAfter(jar, res) };
}
