/**
 * The words each client action of the account page needs (keys of its part of the `account`
 * catalogue), said on the server and handed over as props, so that the catalogue parts do not
 * ship to the browser. Plain values in a module of their own: a server component cannot read a
 * value exported by a "use client" module.
 */
export const KNOWN_DEVICE_WORDS = [
  "none",
  "device",
  "thisDevice",
  "network",
  "firstSeen",
  "firstSeenUnknown",
  "lastSeen",
  "forget",
] as const;
export const DOWNLOAD_WORDS = ["reason", "download"] as const;
export const DELETE_WORDS = ["reason", "confirmLabel", "confirmHint", "enterEmail", "pending", "submit"] as const;

export type Words<Keys extends readonly string[]> = Record<Keys[number], string>;
export const EMAIL_CHANGE_WORDS = ["open", "label", "labelHint", "enterEmail", "submit", "pending", "cancel", "reason", "sent"] as const;
