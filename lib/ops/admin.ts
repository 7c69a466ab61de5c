import type { Gatehouse } from "@/lib/app";
import { signOutEverywhere } from "@/lib/auth/browser-session";
import { newEmailField, normalizeEmail } from "@/lib/auth/credentials";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { ClientAddress } from "@/lib/http/client-address";
import { queueWebhook } from "@/lib/webhooks/events";
import { deleteAccount } from "@/lib/users/delete-account";
import { changeEmailNow } from "@/lib/users/email-change";
import { digestMail, lastWholeWeek } from "@/lib/lifecycle/digest";

/** What an operator's action is recorded as: no network address, a label of its own. */
const OPERATOR: ClientAddress = { address: "operator", key: "operator", source: "unknown" };
const ORIGIN = { browser: "Administrator (command line)" };

export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdminError";
  }
}

/**
 * `account`: the first argument names an account by its address, which the trail records as its
 * username key. `audit`: listing the trail is not itself an entry in it.
 */
export type AdminCommand = {
  name: string;
  usage: string;
  account?: true;
  unrecorded?: true;
  run(context: AdminContext, args: string[]): Promise<string>;
};
export type AdminContext = { gate: Gatehouse; prisma: PrismaClient };

async function userOf({ prisma }: AdminContext, rawEmail: string | undefined): Promise<{ id: string; email: string }> {
  if (!rawEmail) throw new AdminError("Name the account's email address.");
  const email = normalizeEmail(rawEmail);
  const user = await prisma.user.findUnique({ where: { email }, select: { id: true, email: true } });
  if (!user) throw new AdminError(`No account has the address ${email}.`);
  return user;
}

/**
 * The operator's commands (npm run admin -- <command>). Each change is a security event on the
 * account (or, for a deleted account, a log line) and an info log line: an operator's hand on an
 * account is as visible as anyone else's.
 */
export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  {
    name: "unlock",
    account: true,
    usage: "unlock <email>: lift the sign-in pause (lockout) of an account",
    async run(context, [rawEmail]) {
      const { gate } = context;
      if (!rawEmail) throw new AdminError("Name the account's email address.");
      const email = normalizeEmail(rawEmail);
      const key = gate.usernameKey(email);
      const before = await gate.lockouts.check(key, gate.clock(), gate.config.lockout);
      await gate.lockouts.reset(key);
      const user = await context.prisma.user.findUnique({ where: { email }, select: { id: true } });
      if (user) await gate.events.accountChanged(user.id, "admin_unlocked", OPERATOR, ORIGIN);
      context.gate.log.info({ event: "admin_action", action: "unlock", usernameKey: key, wasLocked: before.locked });
      return before.locked ? `Unlocked ${email}.` : `${email} was not locked; its failure count is cleared.`;
    },
  },
  {
    name: "lockouts",
    usage: "lockouts: list the usernames locked now (as their HMAC keys: the table holds no usernames)",
    async run({ gate }) {
      const locked = await gate.lockouts.listLocked(gate.clock(), 100);
      if (locked.length === 0) return "No username is locked.";
      const lines = locked.map(
        (row) =>
          `${row.usernameKey.slice(0, 16)}…  ${String(row.failureCount).padStart(5)} failures  until ${new Date(row.lockedUntilMs).toISOString()}`,
      );
      return [`${locked.length} locked (unlock <email> lifts one; a key is the HMAC of the normalised address):`, ...lines].join("\n");
    },
  },
  {
    name: "revoke-sessions",
    account: true,
    usage: "revoke-sessions <email>: sign the account out everywhere (browser sessions, API sessions, download links, known devices)",
    async run(context, [rawEmail]) {
      const { gate } = context;
      const user = await userOf(context, rawEmail);
      const ended = await signOutEverywhere(gate, user.id, null, gate.clock());
      const devices = await gate.devices.forgetAll(gate.usernameKey(user.email));
      await gate.events.accountChanged(user.id, "admin_sessions_revoked", OPERATOR, ORIGIN);
      context.gate.log.info({ event: "admin_action", action: "revoke_sessions", userId: user.id, ...ended, devicesForgotten: devices });
      return `Signed ${user.email} out everywhere: ${ended.browserSessions} browser sessions, ${ended.apiSessions} API sessions, ${ended.downloadTokens} download links, ${devices} known devices.`;
    },
  },
  {
    name: "passkeys",
    account: true,
    usage: "passkeys <email>: the account's passkeys (id, name, added, last used)",
    async run(context, [rawEmail]) {
      const user = await userOf(context, rawEmail);
      const passkeys = await context.gate.passkeys.list(user.id);
      if (passkeys.length === 0) return `${user.email} has no passkeys.`;
      return passkeys
        .map(
          (passkey) =>
            `${passkey.id}  ${passkey.name}  added ${passkey.createdAt.toISOString()}  ${passkey.lastUsedAt ? `last used ${passkey.lastUsedAt.toISOString()}` : "never used"}${passkey.synced ? "  (synced)" : ""}`,
        )
        .join("\n");
    },
  },
  {
    name: "remove-passkey",
    account: true,
    usage: "remove-passkey <email> <passkey id>: remove one of the account's passkeys (recorded and mailed to the owner)",
    async run(context, [rawEmail, id]) {
      const { gate } = context;
      const user = await userOf(context, rawEmail);
      if (!id) throw new AdminError("Name the passkey's id (npm run admin -- passkeys <email> lists them).");
      const name = await gate.passkeys.remove(user.id, id);
      if (name === null || name === "last_credential") throw new AdminError(`${user.email} has no passkey ${id}.`);
      await gate.events.accountChanged(user.id, "admin_passkey_removed", OPERATOR, ORIGIN);
      void gate.recovery.notice(
        "passkey_removed",
        { id: user.id },
        { browser: ORIGIN.browser, address: "operator", atMs: gate.clock() },
        name,
      );
      context.gate.log.info({ event: "admin_action", action: "remove_passkey", userId: user.id });
      return `Removed the passkey "${name}" from ${user.email}; the owner is told by email.`;
    },
  },
  {
    name: "remove-factors",
    account: true,
    usage:
      "remove-factors <email>: for an owner who lost every second step and code: remove the authenticator app and the recovery codes, stop asking for a passkey after the password (recorded and mailed to the owner)",
    async run(context, [rawEmail]) {
      const { gate } = context;
      const user = await userOf(context, rawEmail);
      const removed = await gate.factors.removeAll(user.id);
      // A sign-in already waiting for a code must not finish with a factor the owner just lost.
      const pending = await gate.pendingSignIns.endAll(user.id, gate.clock());
      await gate.events.accountChanged(user.id, "admin_factors_removed", OPERATOR, ORIGIN);
      void gate.recovery.notice(
        "factors_removed_by_operator",
        { id: user.id },
        { browser: ORIGIN.browser, address: "operator", atMs: gate.clock() },
      );
      gate.log.info({ event: "admin_action", action: "remove_factors", userId: user.id, ...removed, pendingEnded: pending });
      return `Removed the second step of ${user.email}: ${removed.totp} authenticator app, ${removed.recoveryCodes} recovery codes${removed.passkeyAfterPassword ? ", no passkey asked after the password" : ""}. Passkeys stay (remove-passkey removes one). The owner is told by email.`;
    },
  },
  {
    name: "delete-user",
    account: true,
    usage: "delete-user <email>: delete the account and everything stored about it",
    async run(context, [rawEmail]) {
      const { gate, prisma } = context;
      const user = await userOf(context, rawEmail);
      const usernameKey = gate.usernameKey(user.email);
      // One transaction: an account is gone with all its rows, or not at all (lib/users/delete-account.ts).
      const counts = await deleteAccount(prisma, user.id, usernameKey);
      if (!counts) throw new AdminError(`${user.email} was deleted meanwhile.`);
      // No account is left to hold a security event: the log line is the record (and the webhook).
      if (gate.config.webhooks) {
        await queueWebhook(gate.sql, { type: "account.deleted", atMs: gate.clock(), data: { account: user.id, change: "admin_deleted" } });
      }
      context.gate.log.info({ event: "admin_action", action: "delete_user", userId: user.id, usernameKey, ...counts });
      return `Deleted ${user.email} and its data: ${JSON.stringify(counts)}.`;
    },
  },
  {
    name: "change-email",
    account: true,
    usage: "change-email <old> <new>: move an account to another address (no link: the operator vouches for it)",
    async run(context, [rawEmail, rawNew]) {
      const { gate, prisma } = context;
      const user = await userOf(context, rawEmail);
      const parsed = newEmailField.safeParse(rawNew ?? "");
      if (!parsed.success) throw new AdminError("Name a valid new email address.");
      const to = parsed.data;
      if (to === user.email) throw new AdminError(`${user.email} already has that address.`);
      const changed = await changeEmailNow(prisma, user.email, to, gate.usernameKey, gate.clock());
      if (!changed.ok)
        throw new AdminError(changed.reason === "taken" ? `Another account has the address ${to}.` : `${user.email} changed meanwhile.`);
      // As the owner's change: every session and token ends, and links mailed to the old address with them.
      const ended = await signOutEverywhere(gate, user.id, null, gate.clock());
      await gate.events.accountChanged(user.id, "admin_email_changed", OPERATOR, ORIGIN);
      gate.log.info({ event: "admin_action", action: "change_email", userId: user.id, ...ended });
      return `Moved ${user.email} to ${to}: ${ended.browserSessions} browser sessions and ${ended.apiSessions} API sessions ended. It signs in with the new address now.`;
    },
  },
  {
    name: "events",
    account: true,
    usage: "events <email> [count]: the account's recent security events",
    async run(context, [rawEmail, count]) {
      const user = await userOf(context, rawEmail);
      const events = await context.gate.events.recent(user.id, countOf(count));
      if (events.length === 0) return `${user.email} has no security events.`;
      return events
        .map((event) => `${event.at.toISOString()}  ${event.kind.padEnd(26)} ${event.browser ?? ""} ${event.address}`.trimEnd())
        .join("\n");
    },
  },
  {
    name: "digest",
    usage: "digest --dry-run: the weekly digest of the last whole week as DIGEST_EMAIL would get it (printed; nothing is sent)",
    async run({ gate }, flags) {
      if (!flags.includes("--dry-run"))
        throw new AdminError("The instance mails the digest each Monday by itself; preview it with: digest --dry-run");
      const to = gate.config.digest?.to ?? "(DIGEST_EMAIL is unset: no digest is sent)";
      const { message } = await digestMail(gate, to, lastWholeWeek(gate.clock()));
      return [`To: ${message.to}`, `Subject: ${message.subject}`, "", message.text.trimEnd()].join("\n");
    },
  },
  {
    name: "audit",
    usage: "audit [count]: the operators' recent commands (who, what, on which account key, live or offline, how it ended)",
    unrecorded: true,
    async run({ prisma }, [count]) {
      const rows = await prisma.adminAction.findMany({ orderBy: { createdAt: "desc" }, take: countOf(count) });
      if (rows.length === 0) return "No operator command is on record.";
      return rows
        .map((row) =>
          [
            row.createdAt.toISOString(),
            row.operator.padEnd(16),
            row.command.padEnd(16),
            (row.subjectKey ? `${row.subjectKey.slice(0, 16)}…` : "-").padEnd(17),
            row.channel.padEnd(7),
            row.outcome,
          ].join("  "),
        )
        .join("\n");
    },
  },
];

/** A listing's length: 20 unless a count is given, at most 500. */
function countOf(raw: string | undefined): number {
  return Math.min(Math.max(Number.parseInt(raw ?? "20", 10) || 20, 1), 500);
}

export function usage(): string {
  return ["usage: npm run admin -- [--as <operator>] <command>", ...ADMIN_COMMANDS.map((command) => `  ${command.usage}`)].join("\n");
}
