import { PEER_HEADER, PEER_HEADER_SYMBOL } from "@/lib/server-contract.mjs";

export { PEER_HEADER };

/** Does what server.mjs does at start: announce the header that carries the socket address. */
export function announcePeerHeader() {
  (globalThis as Record<symbol, unknown>)[PEER_HEADER_SYMBOL] = PEER_HEADER;
}

let next = 1;
/** A distinct documentation-range address per call, so tests do not share limiter buckets. */
export function freshAddress(): string {
  const n = next++;
  return `198.51.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}
