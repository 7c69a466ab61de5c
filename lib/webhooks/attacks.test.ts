import { describe, expect, it } from "vitest";
import { ADDRESS_CALM_AFTER_MS, AddressWatch, ADDRESSES_TRACKED, EVENTS_PER_RUN } from "./attacks";

describe("AddressWatch", () => {
  it("announces a network once while it keeps being refused, and calm once it was not for the window", () => {
    const watch = new AddressWatch();
    watch.refused("203.0.113.x", 1_000);
    watch.refused("203.0.113.x", 2_000);
    expect(watch.drain(3_000)).toEqual({ underAttack: ["203.0.113.x"], calm: [], unannounced: 0 });
    watch.refused("203.0.113.x", 4_000);
    expect(watch.drain(4_000 + ADDRESS_CALM_AFTER_MS - 1)).toEqual({ underAttack: [], calm: [], unannounced: 0 });
    expect(watch.drain(4_000 + ADDRESS_CALM_AFTER_MS)).toEqual({ underAttack: [], calm: ["203.0.113.x"], unannounced: 0 });
    watch.refused("203.0.113.x", 5_000 + ADDRESS_CALM_AFTER_MS);
    expect(watch.drain(6_000 + ADDRESS_CALM_AFTER_MS).underAttack).toEqual(["203.0.113.x"]);
  });

  it("keeps a flood from 10,000 networks to EVENTS_PER_RUN announcements a run and a count of the rest", () => {
    const watch = new AddressWatch();
    for (let i = 0; i < 10_000; i++) watch.refused(`10.${i >> 8}.${i & 255}.x`, 1_000);
    const first = watch.drain(2_000);
    expect(first.underAttack).toHaveLength(EVENTS_PER_RUN);
    expect(first.unannounced).toBe(10_000 - EVENTS_PER_RUN);
    // The flood goes on: the announced ones are not announced again; the next run takes 20 new ones.
    for (let i = 0; i < 10_000; i++) watch.refused(`10.${i >> 8}.${i & 255}.x`, 3_000);
    const second = watch.drain(4_000);
    expect(second.underAttack).toHaveLength(EVENTS_PER_RUN);
    expect(new Set([...first.underAttack, ...second.underAttack]).size).toBe(2 * EVENTS_PER_RUN);
    expect(second.unannounced).toBe(10_000 - 2 * EVENTS_PER_RUN);
    // Calm is bounded per run too.
    const later = 4_000 + ADDRESS_CALM_AFTER_MS;
    expect(watch.drain(later).calm).toHaveLength(EVENTS_PER_RUN);
    expect(watch.drain(later).calm).toHaveLength(EVENTS_PER_RUN);
    expect(watch.drain(later).calm).toHaveLength(0);
  });

  it("tracks at most ADDRESSES_TRACKED announced networks", () => {
    const watch = new AddressWatch();
    let announced = 0;
    for (let run = 0; run < ADDRESSES_TRACKED / EVENTS_PER_RUN + 5; run++) {
      for (let i = 0; i < EVENTS_PER_RUN; i++) watch.refused(`net-${run}-${i}`, run);
      announced += watch.drain(run).underAttack.length;
    }
    expect(announced).toBe(ADDRESSES_TRACKED);
  });
});
