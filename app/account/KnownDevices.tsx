"use client";

import { AccountTime } from "./AccountTime";
import type { KNOWN_DEVICE_WORDS, Words } from "./action-words";
import type { ConfirmWays } from "./ConfirmItsYou";
import { FreshActionPrompts, FreshPostForm } from "./FreshPostForm";
import { useFreshAction } from "./useFreshAction";

export type KnownDeviceItem = {
  id: string;
  label: string;
  address: string;
  firstSeenAt: string | null;
  lastSeenAt: string;
  current: boolean;
  /** "Forget device …" for this device: its accessible name, and why "Confirm it's you" is asked. */
  forgetLabel: string;
  forgetReason: string;
};

type Props = { formToken: string; email: string; ways: ConfirmWays; devices: KnownDeviceItem[]; words: Words<typeof KNOWN_DEVICE_WORDS> };

/**
 * The known devices as cards (each value labelled, like the sessions above), each with "Forget
 * device …": a plain form that works without JavaScript, and with it asks "Confirm it's you"
 * first when the server wants a fresh authentication, then carries on.
 */
export function KnownDevices({ formToken, email, ways, devices, words }: Props) {
  const action = useFreshAction();
  const { freshly } = action;
  if (devices.length === 0) return <p data-testid="known-devices-none">{words.none}</p>;
  return (
    <>
      <FreshActionPrompts action={action} formToken={formToken} email={email} ways={ways} testId="known-devices-error" />
      <ul className="session-cards" data-testid="known-devices" aria-labelledby="known-devices-title">
        {devices.map((device) => (
          <li key={device.id} className="session-card" data-current={device.current} data-testid="known-device">
            <dl>
              <dt>{words.device}</dt>
              <dd>
                {device.label}
                {device.current ? <strong> {words.thisDevice}</strong> : null}
              </dd>
              <dt>{words.network}</dt>
              <dd className="address">{device.address}</dd>
              <dt>{words.firstSeen}</dt>
              <dd>{device.firstSeenAt ? <AccountTime iso={device.firstSeenAt} /> : words.firstSeenUnknown}</dd>
              <dt>{words.lastSeen}</dt>
              <dd>
                <AccountTime iso={device.lastSeenAt} />
              </dd>
            </dl>
            <FreshPostForm
              action="/api/account/devices/forget"
              formToken={formToken}
              id={device.id}
              reason={device.forgetReason}
              freshly={freshly}
              label={device.forgetLabel}
              text={words.forget}
              className="secondary revoke"
            />
          </li>
        ))}
      </ul>
    </>
  );
}
