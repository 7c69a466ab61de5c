import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { altchaPayload } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { recipientOf, startMailbox } from "../helpers/smtp";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#b3261e"/></svg>';
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-brand-route-"));
fs.writeFileSync(path.join(folder, "logo.svg"), SVG);
fs.writeFileSync(path.join(folder, "logo.png"), PNG);

async function getLogo(hash: string, headers: Record<string, string> = {}): Promise<Response> {
  const { GET } = await import("@/app/api/brand/logo/[hash]/route");
  const request = new NextRequest(`http://localhost/api/brand/logo/${hash}`, { headers: { [PEER_HEADER]: freshAddress(), ...headers } });
  return GET(request, { params: Promise.resolve({ hash }) });
}

/** One served instance per block: the route reads the logo the root loaded at start, through gatehouse(). */
function withInstance(settings: () => Record<string, string>, body: (gate: () => Gatehouse) => void) {
  let database: TestDatabase;
  let gate: Gatehouse;
  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    gate = await servedGatehouse(database.url, settings());
  });
  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });
  body(() => gate);
}

afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

describe("GET /api/brand/logo/<hash> with an SVG logo", () => {
  withInstance(
    () => ({ BRAND_LOGO: path.join(folder, "logo.svg") }),
    (gate) => {
      it("serves the bytes read at start as image/svg+xml, cached for a year, under a CSP that runs no script", async () => {
        const logo = gate().brand.logo!;
        const response = await getLogo(logo.hash);
        expect(response.status).toBe(200);
        expect(await response.text()).toBe(SVG);
        expect(response.headers.get("content-type")).toBe("image/svg+xml");
        expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
        expect(response.headers.get("x-content-type-options")).toBe("nosniff");
        const csp = response.headers.get("content-security-policy") ?? "";
        expect(csp.split("; ")).toEqual(expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'", "sandbox"]));
        expect(response.headers.get("x-frame-options")).toBe("DENY");
        expect(csp).not.toMatch(/script-src/);
        expect(response.headers.get("etag")).toBe(logo.etag);
      });

      it("answers a revalidation with 304 and no body", async () => {
        const logo = gate().brand.logo!;
        const response = await getLogo(logo.hash, { "if-none-match": logo.etag });
        expect(response.status).toBe(304);
        expect(await response.text()).toBe("");
      });

      it("answers another hash (an old logo's URL) with a JSON 404, never the current bytes", async () => {
        for (const hash of ["AAAAAAAAAAAAAAAA", "..%2F..%2Fetc%2Fpasswd", ""]) {
          const response = await getLogo(hash);
          expect(response.status, hash).toBe(404);
          expect(await response.json()).toMatchObject({ error: "not_found" });
        }
      });
    },
  );
});

describe("GET /api/brand/logo/<hash> with a PNG logo", () => {
  withInstance(
    () => ({ BRAND_LOGO: path.join(folder, "logo.png") }),
    (gate) => {
      it("serves image/png by its signature, under the API's policy rather than the SVG's", async () => {
        const response = await getLogo(gate().brand.logo!.hash);
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("image/png");
        expect(new Uint8Array(await response.arrayBuffer())).toEqual(PNG);
        expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
      });
    },
  );
});

describe("GET /api/brand/logo/<hash> without BRAND_LOGO", () => {
  withInstance(
    () => ({}),
    (gate) => {
      it("has no logo to serve: 404", async () => {
        expect(gate().brand.logo).toBeNull();
        expect((await getLogo("AAAAAAAAAAAAAAAA")).status).toBe(404);
      });
    },
  );
});

describe("mail under the instance's brand", () => {
  let smtp: Awaited<ReturnType<typeof startMailbox>>;
  beforeAll(async () => {
    smtp = await startMailbox();
  });
  afterAll(async () => smtp?.close());

  withInstance(
    () => ({ BRAND_NAME: "Acme Login", ...smtp.settings }),
    (gate) => {
      it("names the brand, never Gatehouse, in a registration's verification mail", async () => {
        const email = `brand-${Date.now()}@example.com`;
        const { POST } = await import("@/app/api/register/route");
        const response = await POST(
          new NextRequest("http://localhost/api/register", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
            body: JSON.stringify({ email, password: "the right passphrase", altcha: await altchaPayload() }),
          }),
        );
        expect(response.status).toBe(202);
        await gate().background.idle();
        await gate().mailer.idle();
        const mail = smtp.received.find((received) => recipientOf(received) === email);
        expect(mail?.subject).toBe("Confirm your email address for Acme Login");
        expect(mail?.text).toMatch(/— Acme Login\n/);
        expect(`${mail?.subject} ${mail?.text} ${mail?.html}`).not.toMatch(/Gatehouse/);
      });

      it("writes it in the registering browser's language, and keeps that language and its time zone for later mails", async () => {
        const email = `sprache-${Date.now()}@example.com`;
        const { POST } = await import("@/app/api/register/route");
        const response = await POST(
          new NextRequest("http://localhost/api/register", {
            method: "POST",
            headers: { "content-type": "application/json", "accept-language": "de-CH,de;q=0.9", [PEER_HEADER]: freshAddress() },
            body: JSON.stringify({ email, password: "the right passphrase", altcha: await altchaPayload(), timeZone: "Europe/Zurich" }),
          }),
        );
        expect(response.status).toBe(202);
        expect(await response.json()).toMatchObject({ message: expect.stringMatching(/^Sehen Sie in Ihr Postfach/) });
        await gate().background.idle();
        await gate().mailer.idle();
        const mail = smtp.received.find((received) => recipientOf(received) === email);
        expect(mail?.subject).toBe("Bestätigen Sie Ihre E-Mail-Adresse für Acme Login");
        expect(mail?.text).toContain("Meine E-Mail-Adresse bestätigen:\nhttp://localhost:3000/verify-email#token=");
        expect(await gate().prisma.user.findUniqueOrThrow({ where: { email }, select: { locale: true, timeZone: true } })).toEqual({
          locale: "de",
          timeZone: "Europe/Zurich",
        });
      });
    },
  );
});
