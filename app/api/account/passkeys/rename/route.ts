import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { limited } from "@/lib/http/limited";
import { json, jsonError } from "@/lib/http/responses";
import { passkeyName } from "@/lib/passkeys/rules";

export const dynamic = "force-dynamic";

/** Renames one of the account's passkeys (a plain form post; `json=true` for a script). */
export const POST = limited("/api/account/passkeys/rename", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  const name = passkeyName(form.fields.name ?? "");
  if (!name)
    return jsonError(400, "invalid_input", "Give the passkey a name of 1 to 60 characters.", { fields: { name: "1 to 60 characters." } });
  const renamed = await gate.passkeys.rename(form.session.userId, form.fields.id ?? "", name);
  if (!renamed) return jsonError(404, "not_found", "That passkey is not on your account.");
  return form.fields.json === "true" ? json(200, { status: "passkey_renamed", name }) : backToAccount("passkey_renamed");
});
