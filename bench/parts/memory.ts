import { parseConfig } from "@/lib/config/env";
import { runJsonChild } from "../lib/child";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { fmt, table } from "../lib/stats";
import type { MemoryChildInput, MemoryChildOutput, MemorySample } from "./memory-child";
import { defaultSpec } from "../lib/limits";

/**
 * Part 4: a million distinct addresses through the in-memory store, in a child process of its
 * own so that resident memory is the store's. Beside it, rate-limiter-flexible's RateLimiterMemory
 * on the same keys, which has no bound.
 */

const runChild = (root: string, input: MemoryChildInput) =>
  runJsonChild<MemoryChildInput, MemoryChildOutput>(root, "memory-child.ts", input, `memory child (${input.mode})`);

const above = (sample: MemorySample, baseline: MemorySample) => ({
  rss: sample.rssBytes - baseline.rssBytes,
  heap: sample.heapUsedBytes - baseline.heapUsedBytes,
});

export const memoryPart: Part = {
  id: "memory",
  title: PART_TITLES.memory,
  async run(context: PartContext): Promise<PartReport> {
    const addresses = context.smoke ? 20_000 : 1_000_000;
    const maxEntries = context.smoke ? 2_000 : parseConfig({}, { devServer: true }).rateLimit.memoryMaxEntries;
    const samples = 10;
    context.say(
      `gatehouse, then rate-limiter-flexible: ${fmt.int(addresses)} addresses, RATE_LIMIT_MEMORY_MAX_ENTRIES = ${fmt.int(maxEntries)}`,
    );
    const gatehouseInput: MemoryChildInput = { mode: "gatehouse", addresses, maxEntries, samples };
    const flexibleInput: MemoryChildInput = { mode: "flexible", addresses, maxEntries, samples };
    // One after the other in a full run, so their timings do not share the CPUs; a smoke run saves the time.
    const [ours, theirs] = context.smoke
      ? await Promise.all([runChild(context.root, gatehouseInput), runChild(context.root, flexibleInput)])
      : [await runChild(context.root, gatehouseInput), await runChild(context.root, flexibleInput)];

    const ourEnd = ours.samples.at(-1)!;
    const theirEnd = theirs.samples.at(-1)!;
    // The first sample at which the LRU held its bound: growth after it is what the bound prevents.
    const atBound = ours.samples.find((sample) => sample.entries >= maxEntries) ?? ourEnd;
    const mostHeld = Math.max(...ours.samples.map((sample) => sample.entries));
    const ourBytesPerKey = above(ourEnd, ours.baseline).heap / ourEnd.entries;
    const theirBytesPerKey = above(theirEnd, theirs.baseline).heap / theirEnd.entries;
    // After the bound: what the remaining addresses add (RSS also holds V8's free but reserved pages).
    const afterBound = ours.samples.filter((sample) => sample.addresses > atBound.addresses);
    const rssAfterBound = afterBound.map((sample) => above(sample, ours.baseline).rss);
    const heapAtBound = above(atBound, ours.baseline).heap;
    const heapAtEnd = above(ourEnd, ours.baseline).heap;
    const drain = ours.drain!;

    const rows = ours.samples.map((sample, i) => {
      const their = theirs.samples[i];
      return [
        fmt.int(sample.addresses),
        fmt.int(sample.entries),
        fmt.mib(above(sample, ours.baseline).rss),
        fmt.mib(above(sample, ours.baseline).heap),
        their ? fmt.int(their.entries) : "",
        their ? fmt.mib(above(their, theirs.baseline).rss) : "",
        their ? fmt.mib(above(their, theirs.baseline).heap) : "",
      ];
    });
    const markdown = [
      `${fmt.int(addresses)} distinct IPv4 addresses, each making one sign-in check through \`RateLimiter.consume("signInAddress", [address])\` (HMAC-digested key, policy ${defaultSpec("signInAddress")}) on \`MemoryRateLimitStore\` with the default bound \`RATE_LIMIT_MEMORY_MAX_ENTRIES\` = ${fmt.int(maxEntries)}, in a child process started with \`--expose-gc\`; the clock stands still, so every address is live at once (the worst case). Memory is read after a full GC, as growth over the process before the store was made. Beside it: \`RateLimiterMemory\` with the same limit on the same keys, in its own process. This is the limiter store alone, not the server: part 11 has the server's RSS while distinct addresses arrive.`,
      "",
      table(
        [
          "Addresses seen",
          "Gatehouse entries held",
          "Gatehouse RSS growth",
          "Gatehouse heap growth",
          "RateLimiterMemory entries",
          "RateLimiterMemory RSS growth",
          "RateLimiterMemory heap growth",
        ],
        rows,
      ),
      "",
      table(
        ["", "Value"],
        [
          [
            "Most entries held (bound)",
            `${fmt.int(mostHeld)} (${fmt.int(maxEntries)}): ${mostHeld <= maxEntries ? "within" : "**EXCEEDED**"}`,
          ],
          [
            `Gatehouse heap growth when the bound was reached (${fmt.int(atBound.addresses)} addresses) → after ${fmt.int(ourEnd.addresses)}`,
            `${fmt.mib(heapAtBound)} → ${fmt.mib(heapAtEnd)}`,
          ],
          ...(rssAfterBound.length > 0
            ? [
                [
                  `Gatehouse RSS growth from ${fmt.int(afterBound[0]!.addresses)} to ${fmt.int(ourEnd.addresses)} addresses (lowest – highest sample)`,
                  `${fmt.mib(Math.min(...rssAfterBound))} – ${fmt.mib(Math.max(...rssAfterBound))}`,
                ],
              ]
            : []),
          ["Gatehouse bytes per key (heap growth ÷ entries held, incl. the LRU's preallocated slots)", fmt.int(ourBytesPerKey)],
          ["RateLimiterMemory bytes per key (heap growth ÷ entries; one timer per key included)", fmt.int(theirBytesPerKey)],
          [`Gatehouse at the bound: ${fmt.int(maxEntries)} × bytes per key`, fmt.mib(maxEntries * ourBytesPerKey)],
          [
            `RateLimiterMemory after ${fmt.int(addresses)} addresses (no bound)`,
            `${fmt.mib(above(theirEnd, theirs.baseline).rss)} RSS, ${fmt.mib(above(theirEnd, theirs.baseline).heap)} heap: ${fmt.ratio(above(theirEnd, theirs.baseline).rss / above(ourEnd, ours.baseline).rss)} Gatehouse's RSS growth`,
          ],
          [
            "Check time per address (Gatehouse, incl. HMAC) / (RateLimiterMemory)",
            `${fmt.usFromMs(ours.elapsedMs / addresses)} / ${fmt.usFromMs(theirs.elapsedMs / addresses)}`,
          ],
        ],
      ),
      "",
      `**Drain.** Of the ${fmt.int(drain.checked)} most recent addresses, ${fmt.int(drain.rememberedBefore)} were remembered; after the clock moved on by their refill time (${fmt.int(drain.advancedMs)} ms, the decision's \`resetAfterMs\`: one token of ${defaultSpec("signInAddress")}), ${fmt.int(drain.rememberedAfter)} were. The store does not sweep: expired entries still occupy their LRU slots (${fmt.int(drain.heldAfter)} held) until a new key takes the slot, so memory stays at the bound rather than falling back. A second wave of ${fmt.int(maxEntries)} fresh addresses then left ${fmt.int(drain.afterSecondWave.entries)} entries held and RSS growth at ${fmt.mib(drain.afterSecondWave.rssBytes - ours.baseline.rssBytes)} (was ${fmt.mib(ourEnd.rssBytes - ours.baseline.rssBytes)}). RateLimiterMemory instead deletes each key with its own timer after its 15-minute duration; this run does not wait for that.`,
    ].join("\n");
    return {
      markdown,
      headlines: [
        `Memory, ${fmt.int(addresses)} addresses: Gatehouse's store held at most ${fmt.int(mostHeld)} entries (bound ${fmt.int(maxEntries)}): heap +${fmt.mib(heapAtEnd)} (${fmt.int(ourBytesPerKey)} bytes/key), RSS +${fmt.mib(above(ourEnd, ours.baseline).rss)} and flat once the bound was reached; RateLimiterMemory kept all ${fmt.int(theirEnd.entries)} keys: heap +${fmt.mib(above(theirEnd, theirs.baseline).heap)}, RSS +${fmt.mib(above(theirEnd, theirs.baseline).rss)} (${fmt.ratio(above(theirEnd, theirs.baseline).rss / above(ourEnd, ours.baseline).rss)}) and growing; after the refill time ${fmt.int(drain.rememberedAfter)} of ${fmt.int(drain.checked)} keys remembered`,
      ],
    };
  },
};
