import fs from "node:fs";
import type { PartId } from "./part";

/**
 * bench/RESULTS.md is rewritten section by section: a run of one part replaces that part's block
 * and keeps the others, each block saying when it was measured.
 */
const begin = (id: PartId) => `<!-- bench:${id} -->`;
const end = (id: PartId) => `<!-- /bench:${id} -->`;

export type Section = { id: PartId; markdown: string; headlines: string[] };

function existingBlocks(text: string, ids: readonly PartId[]): Map<PartId, string> {
  const blocks = new Map<PartId, string>();
  for (const id of ids) {
    const from = text.indexOf(begin(id));
    const to = text.indexOf(end(id));
    if (from !== -1 && to > from) blocks.set(id, text.slice(from, to + end(id).length));
  }
  return blocks;
}

function headlinesOf(block: string): string[] {
  const match = /<!-- headlines\n([\s\S]*?)\n-->/.exec(block);
  return match ? match[1]!.split("\n").filter((line) => line !== "") : [];
}

export function writeResults(file: string, order: readonly PartId[], header: string, sections: readonly Section[]): void {
  const previous = fs.existsSync(file) ? existingBlocks(fs.readFileSync(file, "utf8"), order) : new Map<PartId, string>();
  const blocks = new Map(previous);
  for (const section of sections) {
    // Headlines ride along in a comment so a later partial run can rebuild the summary.
    const headlineComment = `<!-- headlines\n${section.headlines.join("\n")}\n-->`;
    blocks.set(section.id, `${begin(section.id)}\n${section.markdown}\n${headlineComment}\n${end(section.id)}`);
  }
  const ordered = order.filter((id) => blocks.has(id)).map((id) => blocks.get(id)!);
  const headlines = ordered.flatMap(headlinesOf);
  const summary = headlines.length > 0 ? ["## Headlines", "", ...headlines.map((line) => `- ${line}`), ""] : [];
  fs.writeFileSync(file, [header, "", ...summary, ...ordered.flatMap((block) => [block, ""])].join("\n"));
}
