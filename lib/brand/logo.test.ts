import { describe, expect, it } from "vitest";
import { checkLogo, logoBox, MAX_LOGO_BYTES } from "./logo";

const text = (value: string) => new TextEncoder().encode(value);
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="#b3261e"/></svg>';
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

function problem(bytes: Uint8Array): string {
  const result = checkLogo("/x/logo", bytes);
  if (result.ok) throw new Error("accepted");
  return result.problem;
}

describe("the logo check", () => {
  it("accepts an SVG document, with an XML declaration, a comment and a doctype before it", () => {
    const plain = checkLogo("/x/logo.svg", text(SVG));
    expect(plain.ok && plain.logo.contentType).toBe("image/svg+xml");
    const prologue = `\uFEFF<?xml version="1.0"?>\n<!-- Acme -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n${SVG}\n`;
    expect(checkLogo("/x/logo.svg", text(prologue)).ok).toBe(true);
  });

  it("accepts references inside the document: a gradient by url(#id), a <use> of its own symbol", () => {
    const local = SVG.replace(
      "<rect",
      '<defs><linearGradient id="g"/><symbol id="s"/></defs><use href="#s"/><use xlink:href="#s"/><circle fill="url(#g)" style="fill: url( \'#g\' )"/><rect',
    );
    expect(checkLogo("/x/logo.svg", text(local)).ok).toBe(true);
  });

  it("accepts a PNG by its signature, whatever the file is called", () => {
    const result = checkLogo("/x/logo.svg", PNG);
    expect(result.ok && result.logo.contentType).toBe("image/png");
  });

  it("names the content by a hash of its bytes", () => {
    const a = checkLogo("/a", text(SVG));
    const b = checkLogo("/b", text(SVG.replace("b3261e", "1f5fbf")));
    if (!a.ok || !b.ok) throw new Error("refused");
    expect(a.logo.hash).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(a.logo.hash).not.toBe(b.logo.hash);
    expect(a.logo.etag).toBe(`"${a.logo.hash}"`);
  });

  it("refuses a file over the size limit", () => {
    const big = text(SVG.replace("</svg>", `<!--${"x".repeat(MAX_LOGO_BYTES)}--></svg>`));
    expect(problem(big)).toMatch(/over the 100000-byte limit/);
  });

  it("refuses what is neither PNG nor SVG", () => {
    expect(problem(text("GIF89a……"))).toMatch(/neither a PNG nor an SVG/);
    expect(problem(text("<html><svg></svg></html>"))).toMatch(/neither a PNG nor an SVG/);
    expect(problem(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toMatch(/UTF-8|neither/);
    expect(problem(PNG.slice(0, 8))).toMatch(/neither a PNG nor an SVG/);
  });

  it.each([
    ["a script element", SVG.replace("<rect", "<script>alert(1)</script><rect"), /<script>/],
    ["a namespaced script", SVG.replace("<rect", '<svg:script xlink:href="x.js"/><rect'), /<script>/],
    ["an event handler", SVG.replace("<rect", '<rect onload="alert(1)"'), /event handler/],
    ["an uppercase event handler", SVG.replace("<rect", "<rect ONCLICK = 'alert(1)'"), /event handler/],
    ["a javascript: link", SVG.replace("<rect", '<a href="javascript:alert(1)"><rect/></a><rect'), /javascript:/],
    ["an entity-encoded javascript: link", SVG.replace("<rect", '<a href="&#106;ava&#x73;cript:alert(1)"><rect/></a><rect'), /javascript:/],
    ["a javascript: link split by a tab", SVG.replace("<rect", '<a href="java\tscript:alert(1)"><rect/></a><rect'), /javascript:/],
    ["embedded HTML", SVG.replace("<rect", "<foreignObject><div/></foreignObject><rect"), /foreignObject/],
    ["an entity declaration", `<!DOCTYPE svg [<!ENTITY a "aaaa">]>${SVG}`, /entity/],
    // Issue 59: active and remote content the check missed.
    ["a data: URL in <use href>", SVG.replace("<rect", '<use href="data:image/svg+xml;base64,PHN2Zy8+#x"/><rect'), /data: URL/],
    ["a data: URL split by a newline", SVG.replace("<rect", '<use xlink:href="da\nta:image/svg+xml,x"/><rect'), /data: URL/],
    ["an external <image>", SVG.replace("<rect", '<image href="https://tracker.example/p.png"/><rect'), /reference outside/],
    ["an external xlink:href", SVG.replace("<rect", "<image xlink:href='//tracker.example/p.png'/><rect"), /reference outside/],
    ["a relative file reference", SVG.replace("<rect", '<use href="other.svg#a"/><rect'), /reference outside/],
    ["a CSS @import", SVG.replace("<rect", "<style>@import url(https://x.example/a.css);</style><rect"), /@import/],
    ["a remote url() in a style", SVG.replace("<rect", '<rect style="fill:url(https://x.example/p.svg#g)"/><rect'), /reference outside/],
    ["an SVG-namespace iframe", SVG.replace("<rect", '<iframe src="https://x.example/"/><rect'), /embedded document/],
    ["an embed", SVG.replace("<rect", '<svg:embed src="x.swf"/><rect'), /embedded document/],
  ])("refuses an SVG with %s", (_, svg, expected) => {
    expect(problem(text(svg))).toMatch(expected);
  });
});

describe("the logo's shape (issue 60)", () => {
  const ratio = (bytes: Uint8Array) => {
    const result = checkLogo("/x/logo", bytes);
    if (!result.ok) throw new Error(result.problem);
    return result.logo.aspectRatio;
  };
  const png = (width: number, height: number) => {
    const bytes = new Uint8Array(33);
    bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    new DataView(bytes.buffer).setUint32(16, width);
    new DataView(bytes.buffer).setUint32(20, height);
    return bytes;
  };

  it("reads a wordmark's width over height from the SVG's viewBox, else its width and height, and a PNG's header", () => {
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 48"></svg>'))).toBe(5);
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0,0,32,32" width="64" height="8"></svg>'))).toBe(1);
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg" width="120px" height="40"></svg>'))).toBe(3);
    expect(ratio(png(480, 96))).toBe(5);
  });

  it("takes a square when nothing says, and keeps a banner or a sliver within 8:1 and 1:4", () => {
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg"></svg>'))).toBe(1);
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg" width="50%" height="20"></svg>'))).toBe(1);
    expect(ratio(text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 10"></svg>'))).toBe(8);
    expect(ratio(png(10, 1000))).toBe(0.25);
  });

  it("fits the box in a height and a widest width, the shape kept", () => {
    expect(logoBox(1, 28, 160)).toEqual({ widthPx: 28, heightPx: 28 });
    expect(logoBox(5, 28, 160)).toEqual({ widthPx: 140, heightPx: 28 });
    expect(logoBox(8, 28, 160)).toEqual({ widthPx: 160, heightPx: 20 });
    expect(logoBox(5, 32, 200)).toEqual({ widthPx: 160, heightPx: 32 });
  });
});
