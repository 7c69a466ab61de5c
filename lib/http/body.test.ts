import { describe, expect, it } from "vitest";
import { isMediaType, readForm, readJson } from "./body";

const FORM = "application/x-www-form-urlencoded";

describe("isMediaType", () => {
  it("accepts the exact type, in any case, with an optional UTF-8 charset", () => {
    expect(isMediaType(FORM, FORM)).toBe(true);
    expect(isMediaType("Application/X-WWW-Form-URLEncoded", FORM)).toBe(true);
    expect(isMediaType(`${FORM}; charset=UTF-8`, FORM)).toBe(true);
    expect(isMediaType('application/json; charset="utf-8"', "application/json")).toBe(true);
  });

  it.each([
    "application/json; x=application/x-www-form-urlencoded",
    `${FORM}; x=application/json`,
    `${FORM}, application/json`,
    `${FORM}; charset=iso-8859-1`,
    `${FORM}x`,
    `text/plain; ${FORM}`,
    "multipart/form-data; boundary=x",
    "",
  ])("refuses %j as a form", (header) => {
    expect(isMediaType(header, FORM)).toBe(false);
  });

  it("refuses a missing header", () => {
    expect(isMediaType(null, FORM)).toBe(false);
  });
});

const request = (type: string, body: string) =>
  new Request("http://localhost/", { method: "POST", headers: { "content-type": type }, body });

describe("readForm", () => {
  it("reads each field once, into an object without a prototype", async () => {
    const result = await readForm(request(FORM, "email=a%40b.c&password=p&__proto__=x"), 1024);
    expect(result.ok && Object.entries(result.value)).toEqual([
      ["email", "a@b.c"],
      ["password", "p"],
      ["__proto__", "x"],
    ]);
    expect(result.ok && Object.getPrototypeOf(result.value)).toBeNull();
  });

  it("refuses a field sent twice, a wrong type and an oversized body with 4xx JSON", async () => {
    const duplicate = await readForm(request(FORM, "email=a&email=b"), 1024);
    const json = await readForm(request("application/json", "{}"), 1024);
    const large = await readForm(request(FORM, `p=${"x".repeat(2048)}`), 1024);
    expect([duplicate, json, large].map((result) => !result.ok && result.response.status)).toEqual([400, 415, 413]);
  });
});

describe("readJson", () => {
  it("reads JSON and refuses forms and broken JSON", async () => {
    expect(await readJson(request("application/json; charset=utf-8", '{"a":1}'), 1024)).toEqual({ ok: true, value: { a: 1 } });
    expect((await readJson(request(FORM, "a=1"), 1024)).ok).toBe(false);
    const broken = await readJson(request("application/json", "{"), 1024);
    expect(!broken.ok && (await broken.response.json())).toMatchObject({ error: "invalid_json" });
  });
});
