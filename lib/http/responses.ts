import { NextResponse } from "next/server";
import type { Translate } from "@/lib/i18n/i18n";
import { containsSentence, englishTranslator, rendered, withSentences, type Sentence } from "@/lib/i18n/sentence";
import type { AppConfig } from "@/lib/config/env";

export type ErrorCode =
  | "invalid_input"
  | "invalid_json"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "locked"
  | "captcha_invalid"
  | "busy"
  | "internal"
  | "invalid_token"
  | "unauthenticated"
  | "not_found"
  | "address_taken"
  | "invalid_credentials"
  | "misconfigured"
  | "csrf_invalid"
  | "unavailable"
  | "reauthentication_required"
  | "passkey_invalid"
  | "second_step_invalid"
  | "invalid_code"
  | "password_change_required"
  | "password_exists"
  | "factor_required"
  | "last_credential";

const NO_STORE = { "Cache-Control": "no-store" };

/** Bodies whose sentences `localized` may render again, by the response that carries them in English. */
const translatable = new WeakMap<Response, { body: Record<string, unknown>; english: string }>();

/** An English JSON answer whose sentences `localized` may say again in another language. */
function translatableJson(body: Record<string, unknown>, status: number, headers: Record<string, string>) {
  const english = JSON.stringify(rendered(body, englishTranslator()));
  const response = new NextResponse(english, { status, headers: { "Content-Type": "application/json", ...headers } });
  if (containsSentence(body)) translatable.set(response, { body, english });
  return response;
}

/**
 * A refusal: a stable `error` code and a `message` for people, in English here; the route's
 * wrapper renders its sentences again in the request's language (`localized`). Fields of `extra`
 * may hold sentences too (the `fields` of invalid_input).
 */
export function jsonError(
  status: number,
  error: ErrorCode,
  message: string | Sentence,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  // Only message and fields are for people; the other fields are codes and figures, never translated.
  const { fields, ...rest } = extra;
  const body = { error, message: withSentences(message), ...rest, ...(fields === undefined ? {} : { fields: withSentences(fields) }) };
  return translatableJson(body, status, { ...NO_STORE, ...headers });
}

/** `response` with its sentences in `locale` (said in Content-Language); any other response as it is. */
export function localized(response: Response, locale: string, t: Translate): Response {
  const said = translatable.get(response);
  if (!said) return response;
  const text = JSON.stringify(rendered(said.body, t));
  // Said the same in this language (English, or a sentence its catalogue lacks): the response
  // as it is, named; a second response costs about as much as the refusal's own work.
  if (text === said.english) {
    response.headers.set("Content-Language", locale);
    return response;
  }
  const headers = new Headers(response.headers);
  headers.set("Content-Language", locale);
  headers.delete("content-length");
  return new NextResponse(text, { status: response.status, headers });
}

/** A JSON answer; a `message` in it, when a catalogue has it, is said in the request's language too. */
export function json(status: number, body: unknown) {
  const message = (body as { message?: unknown } | null)?.message;
  const said = typeof message === "string" ? withSentences(message) : undefined;
  if (!containsSentence(said)) return NextResponse.json(body, { status, headers: NO_STORE });
  return translatableJson({ ...(body as Record<string, unknown>), message: said }, status, NO_STORE);
}

/**
 * The OAuth-style 200 body both token endpoints answer with (never cached). `extra`: fields only
 * a password sign-in returns (the client's new `device_token`).
 */
export function tokenPair(
  accessToken: string,
  refreshToken: string,
  config: { tokens: Pick<AppConfig["tokens"], "accessTtlSeconds" | "refreshTtlSeconds"> },
  extra: Record<string, string> = {},
) {
  return json(200, {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: config.tokens.accessTtlSeconds,
    refresh_token: refreshToken,
    refresh_expires_in: config.tokens.refreshTtlSeconds,
    ...extra,
  });
}
