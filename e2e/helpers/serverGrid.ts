import { test as base, request as playwrightRequest, type APIRequestContext, type APIResponse, type TestInfo } from "@playwright/test";
import { solve } from "../../tests/helpers/altcha";
import { mailTo, tokenOf } from "./outbox";

/**
 * Why this exists: the server under test rate-limits per client address, and every worker
 * connects from 127.0.0.1. Left alone, parallel workers would share one address's allowance
 * and refuse each other at random. The e2e server trusts the test runner as a proxy
 * (TRUSTED_PROXIES in playwright.config.ts), so each test declares its own client address in
 * X-Forwarded-For, exactly as a reverse proxy would, and gets buckets of its own.
 */
let sequence = 0;
export function addressFor(testInfo: TestInfo): string {
  sequence += 1;
  // 10.<worker>.<x>.<y>: unique per worker process and per call within it.
  return `10.${(testInfo.workerIndex % 250) + 1}.${Math.floor(sequence / 250) % 250}.${(sequence % 250) + 1}`;
}

export const test = base.extend<{ clientAddress: string; newClient: () => Promise<APIRequestContext> }>({
  clientAddress: async ({}, use, testInfo) => use(addressFor(testInfo)),
  extraHTTPHeaders: async ({ clientAddress }, use) => use({ "X-Forwarded-For": clientAddress }),
  /** Another client (its own address and cookies), for attacks from many addresses. */
  newClient: async ({ baseURL }, use, testInfo) => {
    const contexts: APIRequestContext[] = [];
    await use(async () => {
      const context = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { "X-Forwarded-For": addressFor(testInfo) } });
      contexts.push(context);
      return context;
    });
    await Promise.all(contexts.map((context) => context.dispose()));
  },
});
export { expect } from "@playwright/test";

const MAX_RETRIES = 3;

/**
 * Retries a request the server refused for capacity (429 or 503), after Retry-After plus
 * jitter. The jitter matters: workers refused together would otherwise come back together
 * and be refused together again. Only for set-up traffic, never for the request under test.
 */
export async function withRetry(send: () => Promise<APIResponse>): Promise<APIResponse> {
  for (let attempt = 0; ; attempt++) {
    const response = await send();
    if (![429, 503].includes(response.status()) || attempt >= MAX_RETRIES) return response;
    const seconds = Number(response.headers()["retry-after"] ?? "1");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000 + Math.random() * 500));
  }
}

/** A solved ALTCHA payload, fetched with `client` (challenges are rate-limited per address too). */
export async function altchaPayload(client: APIRequestContext): Promise<string> {
  const response = await withRetry(() => client.get("/api/altcha/challenge"));
  return solve(await response.json());
}

export type SignInOutcome = {
  status: number;
  kind: "signed-in" | "invalid" | "refused";
  body: Record<string, unknown>;
  retryAfter?: string;
};

/** Signs in through the browser's sign-in route, as the sign-in page does (from its own origin: the CSRF rule). */
export async function signInApi(client: APIRequestContext, email: string, password: string, altcha?: string): Promise<SignInOutcome> {
  const response = await client.post("/api/auth/callback/credentials", {
    headers: { "Sec-Fetch-Site": "same-origin" },
    form: { email, password, altcha: altcha ?? (await altchaPayload(client)), callbackUrl: "/", json: "true" },
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  const status = response.status();
  if (status === 429 || status === 400 || status === 503)
    return { status, kind: "refused", body, retryAfter: response.headers()["retry-after"] };
  const url = typeof body.url === "string" ? new URL(body.url, "http://x") : null;
  return { status, kind: url && !url.searchParams.has("error") ? "signed-in" : "invalid", body };
}

/**
 * Registers through the API and confirms the address from the outbox, as its owner would, so
 * the account can sign in (and is signed in nowhere). Returns the registration's answer (202 for a new and a taken address alike).
 */
export async function registerApi(client: APIRequestContext, email: string, password: string): Promise<APIResponse> {
  const registered = await withRetry(async () =>
    client.post("/api/register", { data: { email, password, altcha: await altchaPayload(client) } }),
  );
  if (registered.status() === 202) {
    const { link } = await mailTo(email, /confirm your email/i);
    // Confirming signs the owner in: from a client of its own (its own address and cookies), whose
    // session is then ended, so the caller's budgets and the account's session list start clean.
    const owner = await playwrightRequest.newContext({
      baseURL: new URL(registered.url()).origin,
      // The verify page's own fetch is same-origin; say so as a browser would (Sec-Fetch-Site).
      extraHTTPHeaders: {
        "Sec-Fetch-Site": "same-origin",
        "X-Forwarded-For": `10.251.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`,
      },
    });
    try {
      const verified = await withRetry(() => owner.post("/api/email/verify", { data: { token: tokenOf(link), password } }));
      if (verified.status() !== 200) throw new Error(`verifying ${email} failed: ${verified.status()} ${await verified.text()}`);
      // The account page's sign-out form carries the session's form token (the CSRF rule, lib/http/csrf.ts).
      const formToken = /name="formToken" value="([^"]+)"/.exec(await (await owner.get("/account")).text())?.[1] ?? "";
      const out = await owner.post("/api/auth/signout", { form: { formToken, callbackUrl: "/", json: "true" } });
      if (out.status() !== 200) throw new Error(`signing ${email} out after confirming failed: ${out.status()}`);
    } finally {
      await owner.dispose();
    }
  }
  return registered;
}
