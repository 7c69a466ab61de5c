"use client";

import { createContext, useContext, useMemo } from "react";
import { Fragment } from "react";
import { formatMessage, formatRich, type Values } from "@/lib/i18n/format";
import type { PageMessages } from "@/lib/app";

/**
 * A page's messages for its client components: precompiled on the server, formatted here with
 * icu-minify's small runtime (no ICU parser ships). Built rather than next-intl's client provider:
 * that one brings its formatter and its own message handling to every page, and the sign-in page
 * had under 1 kB of its budget left (e2e/page-weight.spec.ts). Server components use next-intl.
 */
const MessagesContext = createContext<PageMessages>({ locale: "en", messages: {} });

export function Messages({ value, children }: { value: PageMessages; children: React.ReactNode }) {
  return <MessagesContext.Provider value={value}>{children}</MessagesContext.Provider>;
}

/** A translator for "namespace.key" ids: a key the page did not ship shows as itself, never a throw. */
export type T = (id: string, values?: Values) => string;

export function useT(): T {
  const { locale, messages } = useContext(MessagesContext);
  return useMemo(() => {
    const tag = locale === "xx" ? "en" : locale;
    return (id: string, values?: Values) => {
      const message = messages[id];
      if (message === undefined) return id;
      try {
        return formatMessage(message, tag, values);
      } catch {
        return id;
      }
    };
  }, [locale, messages]);
}

type Tag = (chunks: React.ReactNode[]) => React.ReactNode;

/**
 * A message with tags as React nodes: `rich("banner.tryAgainAt", { time }, { clock: (c) => <time>{c}</time> })`.
 * A tag's name must differ from every value's: both are arguments of the one message.
 */
export function useRich(): (id: string, values: Values, tags: Record<string, Tag>) => React.ReactNode {
  const { locale, messages } = useContext(MessagesContext);
  return useMemo(() => {
    const tag = locale === "xx" ? "en" : locale;
    return (id: string, values: Values, tags: Record<string, Tag>) => {
      const message = messages[id];
      if (message === undefined) return id;
      const parts = formatRich<React.ReactNode>(
        message,
        tag,
        values,
        tags as Record<string, (chunks: React.ReactNode[]) => React.ReactNode>,
      );
      return parts.map((part, i) => <Fragment key={i}>{part}</Fragment>);
    };
  }, [locale, messages]);
}

export function useLocale(): string {
  return useContext(MessagesContext).locale;
}
