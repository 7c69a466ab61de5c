import os from "node:os";
import { z } from "zod";
import type { Gatehouse } from "@/lib/app";
import { normalizeEmail } from "@/lib/auth/credentials";
import { messageOf } from "@/lib/log/message";
import { ADMIN_COMMANDS, AdminError, usage } from "@/lib/ops/admin";
import { queueWebhook } from "@/lib/webhooks/events";

/** One operator command, as the command line sends it to the running instance or runs it itself. */
export type AdminRequest = { command: string; args: string[]; operator: string };
export type AdminReply = { ok: boolean; message: string };
/** "live": the running instance ran it (lib/ops/admin-channel.ts); "offline": the command opened the database. */
export type AdminChannel = "live" | "offline";

// A name for the trail, not a credential: letters, digits and a few separators, so a line of the
// audit listing cannot be forged or broken by a name with a newline or an escape sequence in it.
const OPERATOR_NAME = /^[\p{L}\p{N}._@+-][\p{L}\p{N} ._@+-]{0,63}$/u;

export const adminRequestSchema = z
  .object({
    command: z.string().min(1).max(64),
    args: z.array(z.string().max(512)).max(8),
    operator: z.string().regex(OPERATOR_NAME),
  })
  .strict();

/** The OS user running the command: the default operator name when `--as` is not given. */
export function osOperator(): string {
  try {
    const name = os.userInfo().username;
    if (OPERATOR_NAME.test(name)) return name;
  } catch {
    // No passwd entry for this uid (a container's arbitrary user): the uid names it.
  }
  return `uid-${process.getuid?.() ?? "unknown"}`;
}

/**
 * `[--as <operator>] <command> [arguments]` (also `--as=<operator>`, anywhere before the command).
 * A bad name is refused rather than cleaned: the trail records exactly what the operator typed.
 */
export function parseAdminArgs(argv: string[], defaultOperator: () => string = osOperator): AdminRequest {
  let operator: string | undefined;
  const rest = [...argv];
  while (rest[0]?.startsWith("--as")) {
    const flag = rest.shift()!;
    if (flag === "--as") operator = rest.shift();
    else if (flag.startsWith("--as=")) operator = flag.slice("--as=".length);
    else throw new AdminError(usage());
    if (operator === undefined || !OPERATOR_NAME.test(operator)) {
      throw new AdminError("--as: name the operator with 1 to 64 letters, digits, spaces or . _ @ + - (not starting with a space).");
    }
  }
  const [command, ...args] = rest;
  if (!command) throw new AdminError(usage());
  return { command, args, operator: operator ?? defaultOperator() };
}

/**
 * Runs one command on `gate` and records it in the admin trail (AdminAction), whatever its end:
 * an operator's hand on the instance is on record, a refused or failed attempt included. The
 * reply carries the command's message or its refusal; an unexpected error is named, not thrown,
 * so the live channel answers it as the offline command would print it.
 */
export async function runAdminRequest(gate: Gatehouse, request: AdminRequest, channel: AdminChannel): Promise<AdminReply> {
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === request.command);
  if (!command) return { ok: false, message: usage() };
  const [first] = request.args;
  const subjectKey = command.account && first ? gate.usernameKey(normalizeEmail(first)) : null;
  let reply: AdminReply;
  let outcome: "done" | "refused" | "failed";
  try {
    reply = { ok: true, message: await command.run({ gate, prisma: gate.prisma }, request.args) };
    outcome = "done";
  } catch (error) {
    outcome = error instanceof AdminError ? "refused" : "failed";
    reply = { ok: false, message: error instanceof AdminError ? error.message : `Failed: ${messageOf(error)}` };
  }
  if (!command.unrecorded) {
    try {
      const atMs = gate.clock();
      await gate.prisma.adminAction.create({
        data: { operator: request.operator, command: command.name, subjectKey, channel, outcome, createdAt: new Date(atMs) },
      });
      if (gate.config.webhooks) {
        await queueWebhook(gate.sql, {
          type: "admin.action",
          atMs,
          data: { operator: request.operator, command: command.name, accountKey: subjectKey, channel, outcome },
        });
      }
    } catch (error) {
      // The command's effect stands; the missing entry must not go unnoticed.
      gate.log.error({ event: "admin_trail_failed", command: command.name, err: messageOf(error) });
      if (reply.ok) reply = { ok: false, message: `${reply.message}\nBut the admin trail could not record it: ${messageOf(error)}` };
    }
  }
  gate.log.info({ event: "admin_command", command: command.name, operator: request.operator, channel, outcome });
  return reply;
}
