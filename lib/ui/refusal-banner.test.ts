import { describe, expect, it } from "vitest";
import { englishTranslator } from "@/lib/i18n/sentence";
import { describeRefusal as describe_, refusalFromBody, secondsLeft, type FormKind, type Refusal } from "./refusal-banner";

const t = englishTranslator();
const describeRefusal = (refusal: Refusal, form: FormKind, nowMs: number) => describe_(refusal, form, nowMs, t);

const T0 = Date.parse("2026-11-30T10:00:00Z");

describe("refusalFromBody", () => {
  it("starts the wait when the answer arrived, from Retry-After over the body's figure", () => {
    const refusal = refusalFromBody({ error: "rate_limited", message: "m", retryAfterSeconds: 99 }, "1", T0);
    expect(refusal.retryAtMs).toBe(T0 + 1_000);
    // The first frame shows the real figure: no clock from page load enters it.
    expect(secondsLeft(refusal, T0)).toBe(1);
    expect(refusalFromBody({ error: "busy", message: "m", retryAfterSeconds: 5 }, null, T0).retryAtMs).toBe(T0 + 5_000);
    expect(refusalFromBody({ error: "captcha_invalid", message: "m" }, null, T0).retryAtMs).toBeUndefined();
  });

  it("marks a lock without lockedUntil as approximate, and keeps capped and scope", () => {
    expect(refusalFromBody({ error: "locked", message: "m", retryAfterSeconds: 300 }, "300", T0).approximate).toBe(true);
    expect(refusalFromBody({ error: "locked", message: "m", lockedUntil: "2026-11-30T10:01:00Z" }, "60", T0).approximate).toBeUndefined();
    expect(refusalFromBody({ error: "locked", message: "m", capped: true }, "3600", T0).capped).toBe(true);
    expect(refusalFromBody({ error: "rate_limited", message: "m", scope: "username" }, "30", T0).scope).toBe("username");
  });

  it("falls back to a generic message for a body that is not a refusal", () => {
    expect(refusalFromBody({}, null, T0)).toMatchObject({ error: "error", message: "" });
    expect(describeRefusal(refusalFromBody({}, null, T0), "sign-in", T0).reason).toBe("Something went wrong. Try again.");
  });
});

describe("describeRefusal", () => {
  const limited = refusalFromBody(
    { error: "rate_limited", message: "Too many attempts from your network. Wait before trying again." },
    "169",
    T0,
  );

  it("says the reason once and the wait in minutes and seconds, counting down", () => {
    const view = describeRefusal(limited, "sign-in", T0);
    expect(view.reason).toBe("Too many sign-in attempts have come from your network.");
    expect(view.wait).toEqual({ visible: "2 min 49 s", untilMs: T0 + 169_000, alternative: undefined });
    expect(describeRefusal(limited, "sign-in", T0 + 100_500).wait?.visible).toBe("1 min 9 s");
    // The server's own "Wait before trying again" is not said a second time.
    expect(JSON.stringify(view)).not.toContain("Wait before");
  });

  it("names the email address when the per-address-and-email limit refused, and registration by its name", () => {
    expect(describeRefusal({ ...limited, scope: "username" }, "sign-in", T0).reason).toBe(
      "Too many sign-in attempts for this email address have come from your network. If we emailed you that sign-in is paused, its link lets this browser sign in at once.",
    );
    expect(describeRefusal(limited, "register", T0).reason).toBe("Too many registration attempts have come from your network.");
  });

  it("changes its message when the wait is over", () => {
    expect(describeRefusal(limited, "sign-in", T0 + 169_000)).toEqual({ tone: "ok", reason: "You can try again now.", over: true });
    expect(secondsLeft(limited, T0 + 169_000)).toBe(0);
    const lock = refusalFromBody({ error: "locked", message: "m" }, "300", T0);
    expect(describeRefusal(lock, "sign-in", T0 + 300_000).reason).toBe("Sign-in has resumed: you can try again now.");
  });

  it("tells a browser the server does not know that the account is paused, in rounded words only", () => {
    const lock = refusalFromBody(
      { error: "locked", message: "Sign-in to this account is paused… Try again in about 5 minutes…" },
      "300",
      T0,
    );
    const view = describeRefusal(lock, "sign-in", T0 + 1_000);
    expect(view.reason).toBe("Sign-in to this account is paused after repeated failed attempts.");
    expect(view.wait).toMatchObject({ visible: "about 5 minutes", alternative: "or now from a device you have used before" });
    // No seconds: the server rounded the end up and the banner must not pretend to know it better.
    expect(view.wait?.visible).not.toMatch(/\ds/);
  });

  it("counts a known device's own lock down exactly", () => {
    const lock = refusalFromBody({ error: "locked", message: "m", lockedUntil: "2026-11-30T10:01:00Z" }, "60", T0);
    expect(describeRefusal(lock, "sign-in", T0)).toMatchObject({
      reason: "Sign-in from this device is paused after repeated failed attempts.",
      wait: { visible: "1 min" },
    });
  });

  it("shows a capped lock's own message with no countdown and does not hold the button", () => {
    const capped = refusalFromBody(
      { error: "locked", message: "Sign-in to this account from new devices is paused.", capped: true },
      "86400",
      T0,
    );
    expect(describeRefusal(capped, "sign-in", T0)).toEqual({
      tone: "warn",
      reason: "Sign-in to this account from new devices is paused.",
      over: false,
    });
    expect(secondsLeft(capped, T0)).toBe(0);
  });

  it("gives no time of day for a wait of a few seconds, and uses the server's words for other codes", () => {
    const busy = refusalFromBody(
      { error: "busy", message: "The server is busy checking other passwords. Try again in a moment." },
      "1",
      T0,
    );
    expect(describeRefusal(busy, "sign-in", T0)).toMatchObject({
      reason: "The server could not take your request just now.",
      wait: { visible: "1 s", untilMs: undefined },
    });
    // A database outage (503 unavailable) is a wait too, told like busy.
    const down = refusalFromBody({ error: "unavailable", message: "Sign-in is unavailable right now." }, "5", T0);
    expect(describeRefusal(down, "sign-in", T0)).toMatchObject({
      tone: "warn",
      reason: "The server could not take your request just now.",
    });
    const captcha = refusalFromBody({ error: "captcha_invalid", message: "The robot check expired. Try again." }, null, T0);
    expect(describeRefusal(captcha, "register", T0)).toEqual({ tone: "error", reason: "The robot check expired. Try again.", over: false });
  });
});
