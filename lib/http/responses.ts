import { NextResponse } from "next/server";

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
  | "invalid_credentials"
  | "misconfigured"
  | "csrf_invalid"
  | "unavailable"
  | "reauthentication_required"
  | "passkey_invalid"
  | "second_step_invalid"
  | "invalid_code"
  | "password_change_required";

const NO_STORE = { "Cache-Control": "no-store" };

export function jsonError(
  status: number,
  error: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return NextResponse.json({ error, message, ...extra }, { status, headers: { ...NO_STORE, ...headers } });
}

export function json(status: number, body: unknown) {
  return NextResponse.json(body, { status, headers: NO_STORE });
}
