"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { useT } from "../components/Messages";
import { localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";

export const postForm = (path: string, fields: Record<string, string>) =>
  fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

/**
 * An account-page action that may need a fresh authentication: `freshly(reason, attempt)` runs
 * `attempt`; when the server answers `reauthentication_required`, `confirming` asks ("Confirm
 * it's you") and the action runs again after it. A refusal is kept for the banner; a success
 * goes to `onOk` (by default the page is read again).
 */
export function useFreshAction() {
  const t = useT();
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [confirming, setConfirming] = useState<{ reason: string; resume: () => Promise<void> } | null>(null);
  const nowMs = useRefusalClock(refusal);

  async function freshly(reason: string, attempt: () => Promise<Response | null>, onOk?: (res: Response) => Promise<void> | void) {
    setRefusal(null);
    setPending(true);
    try {
      const res = await attempt();
      const body =
        res && res.status === 401
          ? ((await res
              .clone()
              .json()
              .catch(() => ({}))) as { error?: string })
          : {};
      if (body.error === "reauthentication_required") {
        setConfirming({
          reason,
          resume: async () => {
            setConfirming(null);
            await freshly(reason, attempt, onOk);
          },
        });
        return;
      }
      if (res && !res.ok) return setRefusal(await refusalFrom(res));
      if (res && onOk) await onOk(res);
      else router.refresh();
    } catch {
      setRefusal(localRefusal("unavailable", t("account.confirm.failed")));
    } finally {
      setPending(false);
    }
  }

  return { pending, refusal, setRefusal, nowMs, confirming, setConfirming, freshly };
}
