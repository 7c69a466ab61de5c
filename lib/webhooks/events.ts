import { randomUUID } from "node:crypto";
import { msToUtc, type Sql } from "@/lib/db/sql";
import { writeTogether, type Writes } from "@/lib/db/one-statement";
import type { SecurityEventKind } from "@/lib/events/kinds";

/** What the client's systems are told (docs/webhooks.md lists each with its data). */
export type WebhookEventType =
  | "account.locked"
  | "account.under_attack"
  | "account.unlocked"
  | "account.new_device"
  | "account.password_changed"
  | "account.factor_changed"
  | "account.deleted"
  | "email.changed"
  | "admin.action"
  | "username.under_attack"
  | "username.calm"
  | "address.under_attack"
  | "address.calm"
  | "attack.summary";

/**
 * Pseudonymous as the account page is: the account's id (never its address), the network
 * shortened (IPv4 /24, IPv6 /48), the browser family. Never a password, code, token or secret.
 */
export type WebhookData = Record<string, string | null>;
export type WebhookEvent = { type: WebhookEventType; atMs: number; data: WebhookData };

/** The security events that are also webhooks, and which. Anything else stays inside. */
const FROM_SECURITY_EVENT: Partial<Record<SecurityEventKind, WebhookEventType>> = {
  locked: "account.locked",
  // NIST's cap reached: new devices are refused for this username until the owner acts.
  untrusted_paused: "account.under_attack",
  admin_unlocked: "account.unlocked",
  unlock_link_used: "account.unlocked",
  password_changed: "account.password_changed",
  password_reset: "account.password_changed",
  passkey_added: "account.factor_changed",
  passkey_removed: "account.factor_changed",
  admin_passkey_removed: "account.factor_changed",
  passkeys_removed_by_reset: "account.factor_changed",
  passkeys_removed_by_recovery: "account.factor_changed",
  totp_added: "account.factor_changed",
  totp_removed: "account.factor_changed",
  passkey_second_factor_on: "account.factor_changed",
  passkey_second_factor_off: "account.factor_changed",
  recovery_codes_replaced: "account.factor_changed",
  admin_factors_removed: "account.factor_changed",
  // The account's id only, never an address: what changed is the client's own lookup by id.
  email_changed: "email.changed",
  email_change_undone: "email.changed",
  admin_email_changed: "email.changed",
};

/** The webhook a security event is, or null when it is not one. `network` is already shortened. */
export function webhookOfSecurityEvent(
  kind: SecurityEventKind,
  userId: string,
  network: string,
  browser: string | null,
  atMs: number,
): WebhookEvent | null {
  const type = FROM_SECURITY_EVENT[kind];
  return type ? { type, atMs, data: { account: userId, change: kind, network, browser } } : null;
}

/** The body every attempt sends, byte for byte (the signature covers it): the Standard Webhooks shape. */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: new Date(event.atMs).toISOString(), data: event.data });
}

/**
 * The outbox row for `event`, for a caller that writes it in the statement recording the event
 * (lib/db/one-statement.ts): the two land together or not at all, so a restart or a kill -9
 * after the event cannot lose its webhook. The row's id is the stable webhook-id.
 */
export function webhookWrites(event: WebhookEvent): Writes {
  const id = `msg_${randomUUID()}`;
  const body = webhookBody(event);
  return (param, when) => [
    `INSERT INTO "WebhookOutbox" ("id", "type", "payload", "createdAt", "nextAttemptAt")
     SELECT ${param(id)}, ${param(event.type)}, ${param(body)}, ${msToUtc(param(event.atMs))}, ${msToUtc(param(event.atMs))}
     WHERE ${when}`,
  ];
}

/** Queues one webhook on its own (an admin action, a new device, a deleted account). */
export async function queueWebhook(sql: Sql, event: WebhookEvent): Promise<void> {
  await writeTogether(sql, webhookWrites(event));
}
