/**
 * One value per process under a name, made on first use. It lives on globalThis: a module-level
 * variable would be one per Next.js bundle (docs/decisions/0006-results-not-exceptions.md).
 * A promise that rejects is forgotten, so the next call tries again instead of failing for good.
 */
const REMEMBERED = Symbol.for("gatehouse.remembered");

function slots(): Map<string, unknown> {
  const global = globalThis as Record<symbol, Map<string, unknown> | undefined>;
  return (global[REMEMBERED] ??= new Map());
}

export function remember<T>(name: string, make: () => T): T {
  const all = slots();
  if (all.has(name)) return all.get(name) as T;
  const value = make();
  all.set(name, value);
  if (value instanceof Promise) {
    value.catch(() => {
      if (all.get(name) === value) all.delete(name);
    });
  }
  return value;
}

/** Drops the value (it is not closed here): the next `remember` makes a new one. */
export function forget(name: string): void {
  slots().delete(name);
}
