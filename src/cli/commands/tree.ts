/** `bonsai tree FILE`: the entry tree, with labels, summaries and the current leaf marked. */
import type { Command } from "commander";
import type { SessionManager } from "../../session/manager.js";
import { flattenTree } from "../../session/tree.js";
import { withoutHidden } from "../../format/tree-nodes.js";
import { isCheckoutMarker, type SessionTreeNode } from "../../format/entry-types.js";
import { openForReading } from "../../ops/open-session.js";
import { type Colors, colors, print, printJson, runAction, warn } from "../output.js";
import { clip, entryPreview } from "../../messages/preview.js";

export interface TreeJson {
  leafId: string | null;
  nodes: { id: string; parentId: string | null; type: string; children: string[]; label: string | null }[];
}

/** Every entry, depth first, children in the order the reference sorts them (by time). */
export function treeJson(session: SessionManager): TreeJson {
  const nodes = flattenTree(session.getTree()).map(({ node }) => ({
    id: node.entry.id,
    parentId: node.entry.parentId,
    type: node.entry.type,
    children: node.children.map((c) => c.entry.id),
    label: node.label ?? null,
  }));
  return { leafId: session.getLeafId(), nodes };
}

/** Children with checkout markers replaced by their own (visible) children. */
function visibleChildren(nodes: readonly SessionTreeNode[], showAll: boolean): SessionTreeNode[] {
  return showAll ? [...nodes] : withoutHidden(nodes, isCheckoutMarker);
}

export interface RenderOptions {
  leafId: string | null;
  /** ids on the path to the leaf, highlighted */
  activePath: ReadonlySet<string>;
  showAll?: boolean;
  previewWidth?: number;
}

/**
 * One line per entry. A chain of single children stays at the same indentation; only a fork
 * indents, with box-drawing connectors, so a 10,000-entry linear session stays readable.
 * Iterative, so depth is not limited by the call stack.
 */
export function renderTree(roots: readonly SessionTreeNode[], c: Colors, options: RenderOptions): string[] {
  const width = options.previewWidth ?? 60;
  const lines: string[] = [];
  type Item = { node: SessionTreeNode; prefix: string; connector: "" | "├─ " | "└─ " };
  const stack: Item[] = [];
  const pushSiblings = (nodes: SessionTreeNode[], prefix: string) => {
    if (nodes.length === 1) stack.push({ node: nodes[0], prefix, connector: "" });
    else for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i], prefix, connector: i === nodes.length - 1 ? "└─ " : "├─ " });
  };
  pushSiblings(visibleChildren(roots, options.showAll ?? false), "");
  while (stack.length > 0) {
    const { node, prefix, connector } = stack.pop()!;
    lines.push(prefix + c.dim(connector) + describeNode(node, c, options, width));
    const childPrefix = prefix + (connector === "├─ " ? c.dim("│  ") : connector === "└─ " ? "   " : "");
    pushSiblings(visibleChildren(node.children, options.showAll ?? false), childPrefix);
  }
  return lines;
}

function describeNode(node: SessionTreeNode, c: Colors, options: RenderOptions, width: number): string {
  const { entry } = node;
  const preview = entryPreview(entry);
  const onPath = options.activePath.has(entry.id);
  const id = onPath ? c.green(entry.id) : c.dim(entry.id);
  let head: string;
  if (preview.summary === "compaction") head = c.magenta(c.bold("COMPACTION"));
  else if (preview.summary === "branch") head = c.blue(c.bold("BRANCH SUMMARY"));
  else if (entry.type === "message") head = roleColor(preview.kind, c)(preview.kind);
  else head = c.dim(preview.kind);
  const text = preview.text ? ` ${clip(preview.text, width)}` : "";
  const label = node.label !== undefined ? ` ${c.cyan(c.bold(`[${node.label}]`))}` : "";
  const leaf = entry.id === options.leafId ? ` ${c.yellow(c.bold("← leaf"))}` : "";
  return `${id} ${head}${onPath ? text : c.dim(text)}${label}${leaf}`;
}

function roleColor(role: string, c: Colors): (s: string) => string {
  switch (role) {
    case "user":
      return (s) => c.bold(c.green(s));
    case "assistant":
      return c.bold;
    case "toolResult":
      return c.dim;
    default:
      return c.yellow;
  }
}

export function register(program: Command): void {
  program
    .command("tree")
    .description("the entry tree with labels, compactions, branch summaries and the current leaf")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--json", "print stable JSON: {leafId, nodes: [{id, parentId, type, children, label}]} depth first")
    .option("--all", "also show bonsai.checkout markers (entries that only record a moved leaf)")
    .action(
      runAction(async (path: string, options: { json?: boolean; all?: boolean }) => {
        const session = await openForReading(path, warn);
        if (options.json) {
          printJson(treeJson(session));
          return;
        }
        const leafId = session.getLeafId();
        const activePath = new Set(session.getBranch().map((e) => e.id));
        const lines = renderTree(session.getTree(), colors(), { leafId, activePath, showAll: options.all });
        if (lines.length === 0) print(colors().dim("(no entries)"));
        else print(lines.join("\n"));
      }),
    );
}
