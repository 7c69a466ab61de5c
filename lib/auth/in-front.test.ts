import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEV_SERVER_SYMBOL, IN_FRONT_SYMBOL } from "@/lib/server-contract.mjs";
import { answeredInFront, type InFrontHandler, type NodeRequest } from "./in-front";

vi.mock("@/lib/app", () => ({ gatehouse: async () => ({ log: { debug: () => {} } }) }));

const slots = globalThis as Record<symbol, unknown>;
const PATH = "/api/auth/callback/credentials";

function published(): InFrontHandler | undefined {
  return (slots[IN_FRONT_SYMBOL] as Map<string, InFrontHandler> | undefined)?.get(`POST ${PATH}`);
}

/** A request as Node's parser hands it to server.mjs: parsed headers and the body as a stream. */
function nodeRequest(headers: NodeRequest["headers"], body: string): NodeRequest {
  return Object.assign(Readable.from([Buffer.from(body)]), { method: "POST", url: `${PATH}?x=1`, headers });
}

afterEach(() => {
  delete slots[IN_FRONT_SYMBOL];
  delete slots[DEV_SERVER_SYMBOL];
});

describe("answeredInFront", () => {
  it("publishes the route's handler, which reads the request as Node parsed it", async () => {
    let seen: { url: string; method: string; cookie: string | null; origin: string | null; body: string } | null = null;
    answeredInFront("POST", PATH, async (request) => {
      seen = {
        url: request.url,
        method: request.method,
        cookie: request.headers.get("cookie"),
        origin: request.headers.get("origin"),
        body: await request.text(),
      };
      return Response.json({ ok: true });
    });
    const answer = await published()!(
      // Node joins repeated cookies with "; " and keeps the first Origin: the handler reads the same.
      nodeRequest({ host: "gate.example:3000", cookie: "a=1; b=2", origin: "http://gate.example:3000" }, "email=x%40y.z"),
    );
    expect(seen).toEqual({
      url: `http://gate.example:3000${PATH}?x=1`,
      method: "POST",
      cookie: "a=1; b=2",
      origin: "http://gate.example:3000",
      body: "email=x%40y.z",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"ok":true}');
  });

  it("answers as Next.js does: security headers, its Vary, every Set-Cookie its own, gzip when taken", async () => {
    answeredInFront("POST", PATH, async () => {
      const response = Response.json({ url: "/" });
      response.headers.append("Set-Cookie", "session=s; Path=/; HttpOnly");
      response.headers.append("Set-Cookie", "device=d; Path=/; HttpOnly");
      return response;
    });
    const plain = await published()!(nodeRequest({ host: "gate.example" }, ""));
    expect(plain.headers["set-cookie"]).toEqual(["session=s; Path=/; HttpOnly", "device=d; Path=/; HttpOnly"]);
    expect(plain.headers["x-content-type-options"] ?? plain.headers["X-Content-Type-Options"]).toBe("nosniff");
    expect(plain.headers.Vary).toContain("Accept-Encoding");
    expect(plain.headers["Content-Encoding"]).toBeUndefined();
    const zipped = await published()!(nodeRequest({ host: "gate.example", "accept-encoding": "gzip, br" }, ""));
    expect(zipped.headers["Content-Encoding"]).toBe("gzip");
    expect(gunzipSync(zipped.body).toString()).toBe(plain.body);
    // Refused with q=0, or not named at all: the plain body (RFC 9110 12.5.3).
    for (const refused of ["gzip;q=0, identity", "br", "*;q=0"])
      expect(
        (await published()!(nodeRequest({ host: "gate.example", "accept-encoding": refused }, ""))).headers["Content-Encoding"],
      ).toBeUndefined();
    expect((await published()!(nodeRequest({ host: "gate.example", "accept-encoding": "*" }, ""))).headers["Content-Encoding"]).toBe(
      "gzip",
    );
  });

  it("merges the route's headers as Next.js does: next.config's stay, its Vary is added, its framing dropped", async () => {
    answeredInFront("POST", PATH, async () =>
      Response.json({}, { headers: { "x-frame-options": "SAMEORIGIN", vary: "Origin", "content-length": "99" } }),
    );
    const answer = await published()!(nodeRequest({ host: "gate.example" }, ""));
    expect(Object.keys(answer.headers).filter((name) => name.toLowerCase() === "x-frame-options")).toEqual(["X-Frame-Options"]);
    expect(answer.headers["X-Frame-Options"]).toBe("DENY");
    expect(answer.headers.Vary).toEqual([expect.stringContaining("Accept-Encoding"), "Origin"]);
    expect(Object.keys(answer.headers).map((name) => name.toLowerCase())).not.toContain("content-length");
  });

  it("survives a Host that is no host name", async () => {
    answeredInFront("POST", PATH, async (request) => Response.json({ url: request.url }));
    for (const host of ["bad host/@", "u:p@gate.example", "gate.example:1:2", "[::1"]) {
      const answer = await published()!(nodeRequest({ host }, ""));
      expect(JSON.parse(String(answer.body)), host).toEqual({ url: `http://localhost${PATH}?x=1` });
    }
    // An IPv6 literal is a host too (NextRequest names loopback `localhost`, as it does in Next.js).
    expect((await published()!(nodeRequest({ host: "[2001:db8::1]:3000" }, ""))).status).toBe(200);
  });

  it("publishes nothing for the development server, which reloads routes", () => {
    slots[DEV_SERVER_SYMBOL] = true;
    answeredInFront("POST", PATH, async () => Response.json({}));
    expect(published()).toBeUndefined();
  });
});
