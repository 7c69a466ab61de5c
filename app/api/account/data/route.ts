import { readAccountForm } from "@/lib/auth/account-form";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";
import { exportAccountData } from "@/lib/users/data-export";

export const dynamic = "force-dynamic";

/**
 * "Download my data": the account's data as a JSON file (lib/users/data-export.ts: no secret of
 * any kind). It is the whole account in one file, for whoever holds the session: a fresh
 * authentication first, then one export per account per few minutes (accountExport), which a
 * request sent back to confirm does not spend.
 */
export const POST = limited("/api/account/data", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate);
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const stale = await freshAuthenticationRefusal(gate, form.session, form.fields.json === "true" ? "json" : "redirect");
  if (stale) {
    limits.notApplied("user");
    return stale;
  }
  const refused = await limits.limit("user", userId);
  if (refused) return refused;

  const nowMs = gate.clock();
  const account = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  const data =
    account &&
    (await exportAccountData(gate.prisma, gate.devices, { userId, usernameKey: gate.usernameKey(account.email), currentSid: sid }, nowMs));
  if (!data) return jsonError(404, "not_found", "That account no longer exists.");
  await gate.events.accountChanged(userId, "data_exported", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  gate.log.info({ event: "data_exported", userId });
  const day = new Date(nowMs).toISOString().slice(0, 10);
  return new Response(JSON.stringify(data, null, 2), {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="account-data-${day}.json"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
});
