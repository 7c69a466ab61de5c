"use client";

import { useT } from "../components/Messages";
import { AccountTime } from "./AccountTime";
import { FreshActionPrompts, FreshPostForm } from "./FreshPostForm";
import { useFreshAction } from "./useFreshAction";

export type KnownDeviceItem = {
  id: string;
  label: string;
  address: string;
  firstSeenAt: string | null;
  lastSeenAt: string;
  current: boolean;
};

type Props = { formToken: string; email: string; hasPasskey: boolean; devices: KnownDeviceItem[] };

/**
 * The known devices as cards (each value labelled, like the sessions above), each with "Forget
 * device …": a plain form that works without JavaScript, and with it asks "Confirm it's you"
 * first when the server wants a fresh authentication, then carries on.
 */
export function KnownDevices({ formToken, email, hasPasskey, devices }: Props) {
  const t = useT();
  const action = useFreshAction();
  const { freshly } = action;
  if (devices.length === 0) return <p data-testid="known-devices-none">{t("account.devices.none")}</p>;
  return (
    <>
      <FreshActionPrompts action={action} formToken={formToken} email={email} hasPasskey={hasPasskey} testId="known-devices-error" />
      <ul className="session-cards" data-testid="known-devices" aria-labelledby="known-devices-title">
        {devices.map((device) => (
          <li key={device.id} className="session-card" data-current={device.current} data-testid="known-device">
            <dl>
              <dt>{t("account.devices.device")}</dt>
              <dd>
                {device.label}
                {device.current ? <strong> {t("account.devices.thisDevice")}</strong> : null}
              </dd>
              <dt>{t("account.devices.network")}</dt>
              <dd className="address">{device.address}</dd>
              <dt>{t("account.devices.firstSeen")}</dt>
              <dd>{device.firstSeenAt ? <AccountTime iso={device.firstSeenAt} /> : t("account.devices.firstSeenUnknown")}</dd>
              <dt>{t("account.devices.lastSeen")}</dt>
              <dd>
                <AccountTime iso={device.lastSeenAt} />
              </dd>
            </dl>
            <FreshPostForm
              action="/api/account/devices/forget"
              formToken={formToken}
              id={device.id}
              reason={t("account.devices.forgetReason", { device: device.label })}
              freshly={freshly}
              label={t("account.devices.forgetLabel", { device: device.label, address: device.address })}
              text={t("account.devices.forget")}
              className="secondary revoke"
            />
          </li>
        ))}
      </ul>
    </>
  );
}
