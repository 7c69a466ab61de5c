// What an error says about itself, through the wrappers around it (lib/rate-limit/outage.ts and
// lib/db/data-health.ts read it to tell an outage, and damaged data, from a programming error).

export type Inspectable = {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: unknown;
  originalCode?: unknown;
  errno?: unknown;
};

/** Every error in the chain: the error, its causes, and what Prisma's driver adapters carry in `meta`. */
export function* errorChain(error: unknown): Generator<Inspectable> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 20) {
    const next = queue.shift();
    if (!next || typeof next !== "object" || seen.has(next)) continue;
    seen.add(next);
    const item = next as Inspectable;
    yield item;
    queue.push(item.cause);
    const meta = item.meta as { driverAdapterError?: unknown } | undefined;
    if (meta && typeof meta === "object") queue.push(meta.driverAdapterError);
  }
}
