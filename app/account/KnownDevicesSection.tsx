import { headers } from "next/headers";
import { getTranslations } from "next-intl/server";
import { gatehouse } from "@/lib/app";
import { deviceTokenOfHeader } from "@/lib/http/cookies";
import { sessionFormToken } from "@/lib/http/form-token";
import { browserText } from "@/lib/ui/account-labels";
import { KNOWN_DEVICE_WORDS, type Words } from "./action-words";
import type { ConfirmWays } from "./ConfirmItsYou";
import { KnownDevices, type KnownDeviceItem } from "./KnownDevices";

/**
 * "Known devices": the browsers and apps that pass in the owner's lane (OWASP device cookies), this
 * one marked, each with "Forget device …". Labels and networks were recorded at sign-in in English
 * and are said here in the page's language.
 */
export async function KnownDevicesSection({ email, currentSid, ways }: { email: string; currentSid: string; ways: ConfirmWays }) {
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("account")]);
  const nowMs = gate.clock();
  const usernameKey = gate.usernameKey(email);
  const devices = await gate.devices.listOf(usernameKey, nowMs);
  const token = deviceTokenOfHeader((await headers()).get("cookie"), gate.config);
  const currentId = gate.devices.signed(token, usernameKey, nowMs)?.id ?? null;
  return (
    <div className="card">
      <h2 id="known-devices-title">{t("devices.heading")}</h2>
      <p className="hint">{t("devices.hint")}</p>
      <KnownDevices
        formToken={sessionFormToken(gate.config.session.secret, currentSid)}
        email={email}
        ways={ways}
        words={Object.fromEntries(KNOWN_DEVICE_WORDS.map((key) => [key, t(`devices.${key}`)])) as Words<typeof KNOWN_DEVICE_WORDS>}
        devices={devices.map((device) => named(device))}
      />
    </div>
  );

  function named(device: (typeof devices)[number]): KnownDeviceItem {
    const label = device.label === null ? t("devices.unknownLabel") : browserText(device.label, t);
    const address = device.address ?? t("devices.unknownAddress");
    return {
      id: device.id,
      label,
      address,
      firstSeenAt: device.firstSeenAt?.toISOString() ?? null,
      lastSeenAt: device.lastSeenAt.toISOString(),
      current: device.id === currentId,
      forgetLabel: t("devices.forgetLabel", { device: label, address }),
      forgetReason: t("devices.forgetReason", { device: label }),
    };
  }
}
