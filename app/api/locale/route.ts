import { chooseLocale } from "@/lib/i18n/locale-choice";
import { limited } from "@/lib/http/limited";

export const dynamic = "force-dynamic";

/** The language switch in the footer (form or JSON): sets or clears the language cookie. */
export const POST = limited("/api/locale", async (request, { gate }) => chooseLocale(gate, request));
