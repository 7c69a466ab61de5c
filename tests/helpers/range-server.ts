import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { passwordSha1 } from "@/lib/password/breached";

type Mode = "ok" | "slow" | "error" | "garbage";

/**
 * A range server in Pwned Passwords' published format: `SUFFIX:COUNT` lines for a prefix, the
 * known (leaked) passwords with a count, padding lines with count 0 when Add-Padding is asked for.
 * The first path segment picks its behaviour: /ok, /slow (answers after 1.5 s), /error (500),
 * /garbage (200 with something else). `leak` adds passwords later: a breach that becomes known
 * after the accounts were made.
 */
export async function startRangeServer(leaked: readonly string[]) {
  const seen: { path: string; padding: string | undefined }[] = [];
  const hashes = leaked.map(passwordSha1);
  const server: Server = createServer((req, res) => {
    const [, mode, range, prefix] = (req.url ?? "").split("/") as [string, Mode, string, string];
    seen.push({ path: req.url ?? "", padding: req.headers["add-padding"] as string | undefined });
    if (range !== "range" || !/^[0-9A-F]{5}$/.test(prefix)) return void res.writeHead(404).end();
    const lines = hashes.filter((hash) => hash.startsWith(prefix)).map((hash) => `${hash.slice(5)}:${1000 + hash.length}`);
    if (req.headers["add-padding"] === "true")
      for (let i = 0; i < 800; i++) lines.push(`${i.toString(16).toUpperCase().padStart(35, "F")}:0`);
    const answer = () => res.writeHead(200, { "content-type": "text/plain" }).end(lines.join("\r\n"));
    if (mode === "error") return void res.writeHead(500).end("oops");
    if (mode === "garbage") return void res.writeHead(200).end("<html>not a range</html>");
    if (mode === "slow") return void setTimeout(answer, 1_500).unref();
    answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const leak = (passwords: readonly string[]) => void hashes.push(...passwords.map(passwordSha1));
  return { base, seen, leak, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
