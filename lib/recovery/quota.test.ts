import { describe, expect, it } from "vitest";
import { defaultPolicies, policiesFromSpecs } from "@/lib/rate-limit/policies";
import { linkOutlivesQuota, longestEmptyMs } from "./quota";

describe("a reset link outlives its quota's empty spell", () => {
  it("takes the slowest bandwidth's refill interval", () => {
    expect(longestEmptyMs(defaultPolicies.recoveryMail)).toBe(20 * 60_000);
    expect(longestEmptyMs(policiesFromSpecs({ recoveryMail: "3/1h,6/1d" }).recoveryMail)).toBe(4 * 3_600_000);
  });

  it("accepts the defaults (30-minute links, 3 an hour) and refuses a link shorter than one refill, naming both variables", () => {
    expect(
      linkOutlivesQuota("PASSWORD_RESET_LINK_MINUTES", 30 * 60_000, "RATE_LIMIT_RECOVERY_MAIL", defaultPolicies.recoveryMail),
    ).toBeNull();
    const problem = linkOutlivesQuota("PASSWORD_RESET_LINK_MINUTES", 10 * 60_000, "RATE_LIMIT_RECOVERY_MAIL", defaultPolicies.recoveryMail);
    expect(problem).toMatch(/PASSWORD_RESET_LINK_MINUTES: must be at least 20 minutes \(one refill of RATE_LIMIT_RECOVERY_MAIL\)/);
  });
});
