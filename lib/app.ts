import { getLocale } from "next-intl/server";
import { getConfig } from "@/lib/config/env";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import { peerHeaderFromServer } from "@/lib/http/client-address";
import { FAST_PATH_SYMBOL } from "@/lib/http/fast-path";
import { createLogger } from "@/lib/log/logger";
import { DEV_SERVER_SYMBOL, DOOR_SYMBOL } from "@/lib/server-contract.mjs";
import { remember } from "@/lib/remember";
import type { Brand } from "@/lib/brand/brand";
import type { ClientMessages } from "@/lib/i18n/i18n";

export type { Gatehouse } from "@/lib/gatehouse";

/** The name the app's instance is remembered under (tests put their own instance there). */
export const APP_GATEHOUSE = "gatehouse";

/** This process's Gatehouse, built on first use from the environment's configuration. */
export function gatehouse(): Promise<Gatehouse> {
  return remember(APP_GATEHOUSE, async () => {
    const config = getConfig();
    const log = createLogger(config.log.level);
    const database = await openDatabase(config.database.target, {
      minFreeBytes: config.database.minFreeBytes,
      onConnectionLost: (error) => log.warn({ event: "database_connection_lost", err: error.message }),
    });
    try {
      // The server that serves this process (server.mjs) announces its peer header before Next.js
      // builds this; read once here, so the root and its requests read no globals.
      return serve(await createGatehouse(config, database, { log, peerHeader: peerHeaderFromServer() }));
    } catch (error) {
      await database.close();
      throw error;
    }
  });
}

/**
 * Makes `gate` the one server.mjs's fast path and door ask before they hand a request to Next.js.
 * The development server has no door: compiling a route keeps its event loop busy for seconds,
 * and the pages it compiles for would wait behind it.
 */
export function serve(gate: Gatehouse): Gatehouse {
  const slots = globalThis as Record<symbol, unknown>;
  slots[FAST_PATH_SYMBOL] = gate.fastPath;
  slots[DOOR_SYMBOL] = slots[DEV_SERVER_SYMBOL] === true ? null : gate.door;
  return gate;
}

/** This instance's brand, for server components: the one place pages get the name, logo and colours from. */
export async function currentBrand(): Promise<Brand> {
  return (await gatehouse()).brand;
}

/**
 * What a page hands its client components: the locale and the compiled messages of the
 * namespaces they use, nothing more (the page weight budgets in e2e/page-weight.spec.ts).
 */
export type PageMessages = { locale: string; messages: ClientMessages };

export async function pageMessages(namespaces: readonly string[]): Promise<PageMessages> {
  const [locale, { i18n }] = await Promise.all([getLocale(), gatehouse()]);
  return { locale, messages: i18n.clientMessages(locale, namespaces) };
}
