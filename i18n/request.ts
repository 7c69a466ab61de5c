import { cookies, headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { gatehouse } from "@/lib/app";
import { negotiateLocale } from "@/lib/i18n/locales";

/**
 * next-intl's per-request configuration for server components: the visitor's language (cookie,
 * else Accept-Language, else DEFAULT_LOCALE) and its catalogues. Client components never get
 * these: each page hands its own client components only their namespaces, precompiled
 * (app/components/Messages.tsx).
 */
export default getRequestConfig(async () => {
  const { i18n } = await gatehouse();
  const [jar, incoming] = await Promise.all([cookies(), headers()]);
  const locale = negotiateLocale(
    { cookie: jar.get(i18n.cookieName)?.value, acceptLanguage: incoming.get("accept-language") },
    i18n.locales,
    i18n.defaultLocale,
  );
  return {
    locale,
    messages: i18n.messages(locale),
    // A missing key shows English's text via the catalogue test's guarantee; never a thrown page.
    onError: () => {},
    getMessageFallback: ({ namespace, key }) => i18n.translator("en", namespace)(key),
  };
});
