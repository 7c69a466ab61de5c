import { NextResponse } from "next/server";
import type { Gatehouse } from "@/lib/gatehouse";
import { setCookieValue } from "@/lib/http/cookies";
import { readForm, readJson, isMediaType } from "@/lib/http/body";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { jsonError } from "@/lib/http/responses";
import { sentence } from "@/lib/i18n/sentence";
import { chosenLocale } from "@/lib/i18n/locales";

/** A choice is kept a year: it is the visitor's, not a session's. */
const LOCALE_COOKIE_MAX_AGE_SECONDS = 365 * 86_400;

function cookie(gate: Gatehouse, value: string | null): string {
  return setCookieValue(gate.config, "locale", value ?? "", { maxAgeSeconds: value === null ? 0 : LOCALE_COOKIE_MAX_AGE_SECONDS });
}

/**
 * `POST /api/locale`: the footer's language switch. A form (`locale`, `returnTo`) gets a 303 back
 * to the page it came from, so it works without JavaScript; JSON (`{ locale }`) gets 204. A value
 * that names no catalogue clears the choice (the browser's Accept-Language, then DEFAULT_LOCALE,
 * apply again): the form answers as usual, JSON with 400. Only the app's own pages may post it (the route's wrapper checks).
 */
export async function chooseLocale(gate: Gatehouse, request: Request): Promise<Response> {
  const max = gate.config.http.maxBodyBytes;
  if (isMediaType(request.headers.get("content-type"), "application/json")) {
    const body = await readJson(request, max);
    if (!body.ok) return body.response;
    const wanted = (body.value as { locale?: unknown } | null)?.locale;
    const locale = typeof wanted === "string" ? chosenLocale(wanted, gate.i18n.locales) : undefined;
    if (!locale) {
      return jsonError(400, "invalid_input", sentence("refusals.localeInvalid"), {
        fields: { locale: sentence("refusals.localeInvalid") },
      });
    }
    return new Response(null, { status: 204, headers: { "Set-Cookie": cookie(gate, locale), "Cache-Control": "no-store" } });
  }
  const form = await readForm(request, max);
  if (!form.ok) return form.response;
  const locale = chosenLocale(form.value.locale, gate.i18n.locales) ?? null;
  const back = safeCallbackPath(form.value.returnTo, "/");
  const response = new NextResponse(null, { status: 303, headers: { Location: back, "Cache-Control": "no-store" } });
  response.headers.append("Set-Cookie", cookie(gate, locale));
  return response;
}
