import type { Sql } from "@/lib/db/sql";
import type { NoticeKind, NoticeOrigin } from "@/lib/recovery/mails";
import { queueWebhook } from "./events";

/**
 * The owner notices that are also webhooks: a sign-in from a device the account had not used
 * (the other kinds are recorded as security events, and queued there). Runs in the notice's
 * background task, never in the request.
 */
export function noticeWebhook(sql: Sql): (kind: NoticeKind, userId: string, origin: NoticeOrigin) => Promise<void> {
  return async (kind, userId, origin) => {
    if (kind !== "new_device_sign_in") return;
    await queueWebhook(sql, {
      type: "account.new_device",
      atMs: origin.atMs,
      data: { account: userId, change: kind, network: origin.address, browser: origin.browser },
    });
  };
}
