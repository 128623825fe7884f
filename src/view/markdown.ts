/**
 * `bonsai export --md`: the active path (or every entry, `all`) as Markdown for pasting into an
 * issue. Thinking, tool output and summaries go into <details> blocks so the page stays short;
 * code fences are longer than any run of backticks inside them. Built from the view model with
 * bodies (model.ts), so it shows what the page shows. Pure.
 */
import type { Block } from "./blocks.js";
import type { ViewModel, ViewNode } from "./model.js";
import { formatCount } from "../util/count.js";

const count = formatCount;

/** A fenced block that no backtick run inside `text` can close early. */
export function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

function clippedNote(clipped: number | undefined): string {
  return clipped ? `\n\n_… ${count(clipped)} more characters left out of this export_` : "";
}

function details(summary: string, body: string): string {
  return `<details><summary>${summary.replace(/</g, "&lt;")}</summary>\n\n${body}\n\n</details>`;
}

function blockMarkdown(block: Block): string {
  switch (block.kind) {
    case "text":
      return block.text + clippedNote(block.clipped);
    case "thinking":
      return details("thinking", block.text + clippedNote(block.clipped));
    case "toolCall":
      return `**→ ${block.name}**\n\n${fence(block.args, "json")}${clippedNote(block.clipped)}`;
    case "output": {
      const lines = block.text.split("\n").length;
      return details(`${block.isError ? "error: " : ""}${block.title} (${count(lines)} ${lines === 1 ? "line" : "lines"})`, fence(block.text) + clippedNote(block.clipped));
    }
    case "image":
      return `![image](data:${block.mimeType};base64,${block.data})`;
    case "pruned":
      return block.original
        ? `_${block.notice}_\n\n${details("archived original", block.original.map(blockMarkdown).join("\n\n"))}`
        : `_${block.notice}_`;
    case "summary":
      return details(block.title, block.text + clippedNote(block.clipped));
    case "meta":
      return `_${block.text}_${clippedNote(block.clipped)}`;
  }
}

function heading(node: ViewNode): string {
  const parts = [node.kind];
  if (node.model) parts.push(node.model);
  parts.push(`\`${node.id}\``);
  if (node.label) parts.push(`[${node.label}]`);
  const c = node.compaction;
  if (c) parts.push(`${count(c.tokensBefore)} → ${count(c.tokensAfter)} tokens, keeps from \`${c.firstKeptEntryId}\``);
  return `### ${parts.join(" · ")}`;
}

export interface MarkdownOptions {
  /** every entry in tree order instead of the active path */
  all?: boolean;
}

/** The Markdown of a model that carries bodies. */
export function sessionMarkdown(model: ViewModel, options: MarkdownOptions = {}): string {
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const onPath = new Set(model.activePath);
  const nodes = options.all ? model.nodes : model.activePath.map((id) => byId.get(id)!).filter(Boolean);
  const title = model.session.name ?? model.session.id;
  const out = [
    `# ${title}`,
    "",
    `Session \`${model.session.id}\` · ${count(nodes.length)} entries ${options.all ? "(all branches)" : "on the active path"} · leaf \`${model.leafId ?? "none"}\``,
  ];
  if (model.omitted && model.omitted.blocks > 0) {
    out.push("", `> This export is bounded to ${count(model.omitted.maxBytes)} bytes: ${count(model.omitted.blocks)} blocks were clipped or left out (${model.omitted.estimated ? "about " : ""}${count(model.omitted.bytes)} bytes).`);
  }
  for (const node of nodes) {
    if (options.all && node.parentId && (byId.get(node.parentId)?.children ?? 0) > 1) {
      out.push("", `---`, "", `_branch from \`${node.parentId}\`${onPath.has(node.id) ? " (active)" : ""}_`);
    }
    const blocks = model.bodies?.[node.id] ?? [];
    out.push("", heading(node));
    if (node.id === model.leafId) out.push("", "_← current leaf_");
    for (const block of blocks) out.push("", blockMarkdown(block));
  }
  return `${out.join("\n")}\n`;
}
