import { createHash } from "node:crypto";

/**
 * The instance's own logo (BRAND_LOGO): checked once at start, from its bytes, never from its
 * file name. Pure: the caller reads the file.
 */

export const MAX_LOGO_BYTES = 100_000;

/**
 * A checked logo, read from `path`. `hash` is a digest of the bytes: the URL carries it, so a
 * changed logo gets a new URL and `immutable` stays true.
 */
export type Logo = {
  path: string;
  contentType: "image/svg+xml" | "image/png";
  bytes: Uint8Array;
  hash: string;
  etag: string;
  /** Width over height, from the PNG's header or the SVG's viewBox (else width and height); 1 when neither says. */
  aspectRatio: number;
};

/** The header's logo height and widest box (a wordmark's), in CSS pixels; the mails' too (app/globals.css follows). */
export const LOGO_BOX = { header: { heightPx: 28, maxWidthPx: 160 }, mail: { heightPx: 32, maxWidthPx: 200 } } as const;

/**
 * The logo's box within `heightPx` and `maxWidthPx`, its shape kept: a square logo is
 * heightPx square, a 5:1 wordmark heightPx high and five times as wide, and one wider than
 * maxWidthPx allows that wide and lower (mail clients use these numbers as they are).
 */
export function logoBox(aspectRatio: number, heightPx: number, maxWidthPx: number): { widthPx: number; heightPx: number } {
  const widthPx = heightPx * aspectRatio;
  if (widthPx <= maxWidthPx) return { widthPx: Math.round(widthPx), heightPx };
  return { widthPx: maxWidthPx, heightPx: Math.max(1, Math.round(maxWidthPx / aspectRatio)) };
}

/** Ratios beyond these are a banner or a sliver, not a logo: clamped, so the box stays sensible. */
const MIN_RATIO = 1 / 4;
const MAX_RATIO = 8;

function clampRatio(width: number, height: number): number {
  if (!(width > 0) || !(height > 0) || !Number.isFinite(width / height)) return 1;
  return Math.min(MAX_RATIO, Math.max(MIN_RATIO, width / height));
}

/** A PNG's width over height, from its IHDR chunk (bytes 16 to 23, big-endian). */
function pngRatio(bytes: Uint8Array): number {
  if (bytes.length < 24) return 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return clampRatio(view.getUint32(16), view.getUint32(20));
}

/** An SVG's width over height: its viewBox, else its width and height attributes in px (or no unit). */
function svgRatio(text: string): number {
  const tag = /<svg\b[^>]*>/i.exec(text)?.[0] ?? "";
  const attribute = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, "i").exec(tag)?.[1];
  const box = attribute("viewBox")
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (box?.length === 4) return clampRatio(box[2]!, box[3]!);
  const length = (value: string | undefined) => (value && /^\s*[\d.]+\s*(px)?\s*$/i.test(value) ? Number.parseFloat(value) : NaN);
  return clampRatio(length(attribute("width")), length(attribute("height")));
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function isPng(bytes: Uint8Array): boolean {
  return bytes.length > PNG_SIGNATURE.length && PNG_SIGNATURE.every((byte, i) => bytes[i] === byte);
}

/** Numeric character references decoded, so `&#106;avascript:` is seen for what it is. */
function decodeReferences(text: string): string {
  return text.replace(/&#(x[0-9a-f]+|\d+);?/gi, (_, code: string) => {
    const point = code[0]!.toLowerCase() === "x" ? Number.parseInt(code.slice(1), 16) : Number.parseInt(code, 10);
    return point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : "";
  });
}

/**
 * Why an SVG is refused, or null. Browsers run no script in an SVG shown by <img>, and the route
 * serves it under a sandboxing CSP; refusing active content as well means a logo that would run
 * script when opened some other way (saved, or served by a proxy that drops the CSP) never ships.
 */
function svgProblem(bytes: Uint8Array): string | null {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "not an SVG document (not UTF-8 text)";
  }
  // The document's first element, past a BOM, an XML declaration, comments and a DOCTYPE.
  const prologue = /^\uFEFF?\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>\s*)*/i;
  const body = text.replace(prologue, "");
  if (!/^<svg[\s>]/i.test(body) || !/<\/svg\s*>\s*$/i.test(body))
    return "not an SVG document (its first element must be <svg>, its last </svg>)";
  const decoded = decodeReferences(text).toLowerCase();
  // Browsers drop tabs, newlines and control characters inside a URL scheme ("java\tscript:").
  const squeezed = decoded.replace(/[\s\u0000-\u001f]+/g, "");
  if (/<!entity/.test(decoded)) return "an SVG with entity declarations is refused";
  if (/<(\w+:)?script[\s>/]/.test(decoded)) return "an SVG with a <script> element is refused";
  if (/<(\w+:)?foreignobject[\s>/]/.test(decoded)) return "an SVG with a <foreignObject> (embedded HTML) is refused";
  if (/[\s"'/]on[a-z]+\s*=/.test(decoded)) return "an SVG with an event handler attribute (on…=) is refused";
  if (/(javascript|vbscript):|data:text\/html/.test(squeezed)) return "an SVG with a javascript: (or data:text/html) URL is refused";
  // A logo is drawn from its own bytes: another document inside it, a data: URL (a document of its
  // own, <use href="data:…"> included) or anything fetched from elsewhere (a tracker, a stylesheet)
  // is content the check cannot see (issue 59).
  if (/<(\w+:)?(iframe|embed|object)[\s>/]/.test(decoded))
    return "an SVG with an embedded document (<iframe>, <embed>, <object>) is refused";
  if (/data:/.test(squeezed)) return "an SVG with a data: URL is refused";
  if (/@import/.test(squeezed)) return "an SVG with a CSS @import is refused";
  const outside = references(decoded).find((target) => !target.startsWith("#"));
  if (outside !== undefined) return `an SVG with a reference outside itself (${JSON.stringify(outside.slice(0, 60))}) is refused`;
  return null;
}

/** What the document's href, xlink:href and src attributes and CSS url()s point at, spaces dropped. */
function references(decoded: string): string[] {
  const attributes = [...decoded.matchAll(/(?:^|[\s"'/:])(?:href|src)\s*=\s*(["'])([\s\S]*?)\1/g)].map((match) => match[2]!);
  const urls = [...decoded.matchAll(/url\(\s*(["']?)([\s\S]*?)\1\s*\)/g)].map((match) => match[2]!);
  return [...attributes, ...urls].map((target) => target.replace(/[\s\u0000-\u001f]+/g, ""));
}

/** The logo, or why it cannot be one (the caller names BRAND_LOGO). */
export function checkLogo(path: string, bytes: Uint8Array): { ok: true; logo: Logo } | { ok: false; problem: string } {
  if (bytes.length > MAX_LOGO_BYTES) return { ok: false, problem: `${bytes.length} bytes is over the ${MAX_LOGO_BYTES}-byte limit` };
  let contentType: Logo["contentType"];
  if (isPng(bytes)) contentType = "image/png";
  else {
    const problem = svgProblem(bytes);
    if (problem) return { ok: false, problem: /^not an SVG/.test(problem) ? `neither a PNG nor an SVG: ${problem}` : problem };
    contentType = "image/svg+xml";
  }
  const hash = createHash("sha256").update(bytes).digest("base64url").slice(0, 16);
  const aspectRatio = contentType === "image/png" ? pngRatio(bytes) : svgRatio(new TextDecoder().decode(bytes));
  return { ok: true, logo: { path, contentType, bytes, hash, etag: `"${hash}"`, aspectRatio } };
}
