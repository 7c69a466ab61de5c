import { NextRequest } from "next/server";
import { DEV_SERVER_SYMBOL, IN_FRONT_SYMBOL } from "@/lib/server-contract.mjs";
import { gatehouse } from "@/lib/app";
import { nextLikeAnswer, type FastAnswer } from "@/lib/http/fast-path";
import type { RoutePath } from "@/lib/http/route-policies";

/** What server.mjs hands a route answered in front of Next.js: Node's request, as Node parsed it. */
export type NodeRequest = AsyncIterable<Uint8Array> & {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
};

/** A route's handler, as server.mjs calls it: Node's request in, the whole answer out. */
export type InFrontHandler = (incoming: NodeRequest) => Promise<FastAnswer>;

/**
 * Makes server.mjs call `handler` itself for `method path`, instead of handing the request to
 * Next.js's router (docs/decisions/0042-sign-in-answered-in-front-of-nextjs.md): the same handler,
 * wrapper and parse either way, so nothing a request can do reaches the route differently. Called
 * when the route's module loads, which Next.js does on its first request: that one goes through
 * Next.js, the rest in front. Not in development, where Next.js reloads a changed route's module
 * and only it knows which copy is current.
 */
export function answeredInFront(method: "POST", path: RoutePath, handler: (request: Request) => Promise<Response>): void {
  const slots = globalThis as Record<symbol, unknown>;
  if (slots[DEV_SERVER_SYMBOL] === true) return;
  const routes = (slots[IN_FRONT_SYMBOL] ??= new Map<string, InFrontHandler>()) as Map<string, InFrontHandler>;
  const production = process.env.NODE_ENV === "production";
  routes.set(`${method} ${path}`, async (incoming) => {
    const response = await handler(asNextRequest(incoming));
    // Free unless LOG_LEVEL=debug; says which requests skipped Next.js (e2e/in-front.spec.ts).
    (await gatehouse()).log.debug({ event: "answered_in_front", path });
    return nextLikeAnswer(response, production, incoming.headers["accept-encoding"]);
  });
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The NextRequest Next.js would have built: the URL from Host and the path, the headers as Node
 * parsed them (so a repeated header reads as it does in Next.js: joined, or the first for the
 * headers Node keeps once), and the body streamed from the socket, unread.
 */
function asNextRequest(incoming: NodeRequest): NextRequest {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else headers.set(name, value);
  }
  // A host name or address with a port, nothing else: `u:p@x` would put credentials in the URL,
  // which NextRequest refuses with a throw (a 500 and a log line for each such request).
  const host = typeof incoming.headers.host === "string" && HOST.test(incoming.headers.host) ? incoming.headers.host : "localhost";
  // server.mjs answers only origin-form targets in front (lib/http/request-path.mjs); anything else is "/".
  const target = incoming.url?.startsWith("/") && !incoming.url.startsWith("//") ? incoming.url : "/";
  return new NextRequest(new URL(target, `http://${host}`), {
    method: incoming.method,
    headers,
    body: incoming as unknown as ReadableStream<Uint8Array>,
    duplex: "half",
  } as ConstructorParameters<typeof NextRequest>[1]);
}
