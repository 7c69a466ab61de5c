import { getLocale } from "next-intl/server";
import { gatehouse } from "@/lib/auth/gatehouse";
import type { ClientMessages } from "./i18n";

/**
 * What a page hands its client components: the locale and the compiled messages of the
 * namespaces they use, nothing more (the page weight budgets in e2e/page-weight.spec.ts).
 */
export type PageMessages = { locale: string; messages: ClientMessages };

export async function pageMessages(namespaces: readonly string[]): Promise<PageMessages> {
  const [locale, { i18n }] = await Promise.all([getLocale(), gatehouse()]);
  return { locale, messages: i18n.clientMessages(locale, namespaces) };
}
