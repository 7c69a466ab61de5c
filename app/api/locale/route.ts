import { chooseLocale } from "@/lib/auth/locale-choice";
import { limited } from "@/lib/auth/limited";

export const dynamic = "force-dynamic";

/** The language switch in the footer (form or JSON): sets or clears the language cookie. */
export const POST = limited("/api/locale", async (request, { gate }) => chooseLocale(gate, request));
