import { challengeLevel, levelDue, maxCounterAt } from "@/lib/captcha/difficulty";
import { issueChallenge } from "@/lib/captcha/altcha";
import { deviceTokenOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * A signed, expiring proof-of-work challenge for the ALTCHA widget, sized by pressure: the hash
 * budget's recent occupancy and this address's recent failures raise it; a known device keeps
 * the base size (lib/captcha/difficulty.ts). The budget's level is signed in too: the discount
 * holds at use only for the device's own account, and only while no pressure calls for more.
 */
export const GET = limited("/api/altcha/challenge", async (request, limits) => {
  const { gate, client } = limits;
  const nowMs = gate.clock();
  const pressure = {
    budgetPressure: gate.hashBudget.recentPressure(),
    addressFailures: gate.addressFailures.get(client.key) ?? 0,
    knownDevice: await gate.devices.isKnown(deviceTokenOf(request, gate.config), nowMs),
  };
  // A signed cookie whose device is gone (replaced at its sign-in, or revoked) had no lane: it pays the address's limit.
  const byAddress = pressure.knownDevice ? null : await limits.deviceGone();
  if (byAddress) return byAddress;
  const level = challengeLevel(pressure);
  gate.metrics.challengesIssued.inc({ level: String(level) });
  const settings = { ...gate.config.altcha, maxCounter: maxCounterAt(gate.config.altcha.maxCounter, level) };
  return json(200, await issueChallenge(settings, nowMs, level, levelDue(pressure).pressureLevel));
});
