import NextAuth from "next-auth";
import type { NextRequest } from "next/server";
import type { Gatehouse } from "@/lib/app";
import { cookieJar } from "@/lib/http/cookies";
import { authOptions } from "./options";

/** The one next-auth action the app hands to next-auth (reading the session); every other /api/auth path is its own route or a 404. */
export type NextAuthAction = ["session"];

/**
 * Collects what next-auth's Node-style handler writes (status, headers, Set-Cookie, body), then
 * becomes a web Response.
 */
class CollectedResponse {
  private statusCode = 200;
  private readonly headers = new Map<string, string | string[]>();
  private body: string | null = null;

  status(code: number) {
    this.statusCode = code;
    return this;
  }
  getHeader(name: string) {
    return this.headers.get(name.toLowerCase());
  }
  setHeader(name: string, value: string | string[]) {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }
  json(value: unknown) {
    this.setHeader("content-type", "application/json");
    this.body = JSON.stringify(value);
  }
  send(value: unknown) {
    if (typeof value === "string" || value === undefined || value === null) this.body = value ?? null;
    else this.json(value);
  }
  end() {}

  toResponse(): Response {
    const headers = new Headers({ "cache-control": "no-store" });
    for (const [name, value] of this.headers) {
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    return new Response(this.body, { status: this.statusCode, headers });
  }
}

/**
 * Runs one next-auth action on fields the route has already read and validated. next-auth is
 * handed an object, never the request's bytes or query string, so it cannot read a field the
 * gate did not see (its App Router handler would re-parse the body by a looser rule). This is
 * next-auth's Pages-API entry point, which takes a parsed body, fed from a web Request.
 */
export async function callNextAuth(
  gate: Gatehouse,
  request: NextRequest,
  action: NextAuthAction,
  body?: Record<string, string>,
): Promise<Response> {
  const collected = new CollectedResponse();
  const req = {
    method: request.method,
    query: { nextauth: action },
    body,
    cookies: cookieJar(request.cookies),
    headers: Object.fromEntries(request.headers),
  };
  await NextAuth(req as never, collected as never, authOptions(gate));
  return collected.toResponse();
}
