/** `bonsai tree FILE`: the entry tree, with labels, summaries and the current leaf marked. */
import type { Command } from "commander";
import { isCheckoutMarker, type SessionTreeNode } from "../../format/entry-types.js";
import { resolveEntryId } from "../../ops/entry-id.js";
import { openForReading } from "../../ops/open-session.js";
import type { SessionManager } from "../../session/manager.js";
import { positiveCount } from "../numeric-options.js";
import { colors, print, printJson, runAction, warn, SESSION_ARGUMENT_HELP } from "../output.js";
import { allNodes, renderFlat, renderTree, TREE_LEGEND, TREE_PREVIEW_WIDTH } from "../tree-view.js";
import { clip, type EntryPreview, entryPreview, previewReach } from "../../messages/preview.js";
import { treeJson } from "../tree-json.js";
import { DIGEST_COLUMNS, type EntryDigest } from "../../view/entry-digest.js";
import { digestsCache } from "../../view/source.js";

export { type TreeJson, treeJson } from "../tree-json.js";

interface TreeOptions {
  json?: boolean;
  all?: boolean;
  branch?: boolean;
  labels?: boolean;
  since?: string;
  depth?: number;
}

/** The roots to show: the whole tree, or with --since ID the subtree of that entry. */
function selectedRoots(session: SessionManager, options: TreeOptions): SessionTreeNode[] {
  const roots = session.getTree();
  if (options.since === undefined) return roots;
  const id = resolveEntryId(session, options.since);
  return allNodes(roots).filter((n) => n.entry.id === id);
}

export function register(program: Command): void {
  program
    .command("tree")
    .description("the entry tree with labels, compactions, branch summaries and the current leaf")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--json", "print stable JSON: {leafId, nodes: [{id, parentId, type, role, timestamp, preview, children, label}]} depth first")
    .option("--all", "also show bonsai.checkout markers (entries that only record a moved leaf)")
    .option("--branch", "only the active path: the entries from the root to the leaf")
    .option("--labels", "only labeled entries")
    .option("--since <id>", "only this entry and what follows it (unique prefix accepted)")
    .option("--depth <n>", "at most N entries down from the root (or from --since); the rest is counted", positiveCount)
    .action(
      runAction(async (path: string, options: TreeOptions) => {
        const whole = !options.json && !options.branch && !options.labels && options.since === undefined;
        // opened before the session is read (derived-cache.ts): digests an export or a view left
        const digests = whole ? digestsCache(path) : undefined;
        const session = await openForReading(path, warn);
        if (whole) {
          printLines(wholeTree(session, options, digests?.describes(session.getSessionFile()) ? digests.values : new Map()));
          return;
        }
        const roots = selectedRoots(session, options);
        const leafId = session.getLeafId();
        const activePath = new Set(session.getBranch().map((e) => e.id));
        const visible = (nodes: SessionTreeNode[]) => (options.all ? nodes : nodes.filter((n) => !isCheckoutMarker(n.entry)));
        let nodes: SessionTreeNode[] | undefined;
        if (options.branch) nodes = visible(allNodes(roots).filter((n) => activePath.has(n.entry.id)));
        if (options.labels) nodes = visible((nodes ?? allNodes(roots)).filter((n) => n.label !== undefined));
        if (options.json) {
          printJson(treeJson(session, nodes ?? (options.since !== undefined ? allNodes(roots) : undefined)));
          return;
        }
        const c = colors();
        const render = { leafId, activePath, showAll: options.all, depth: options.depth };
        const lines = nodes ? renderFlat(options.depth ? nodes.slice(0, options.depth) : nodes, c, render) : renderTree(roots, c, render);
        if (nodes && options.depth && nodes.length > options.depth) lines.push(c.dim(`… ${nodes.length - options.depth} more entries (--depth)`));
        printLines(lines);
      }),
    );
}

/**
 * The whole tree, its previews made as the bodies go by and none of them kept (getOutline): a
 * 100 MB session is drawn without holding every message in memory. A message with a digest (an
 * earlier export or view worked it out, view/entry-digest.ts) is not read at all.
 */
function wholeTree(session: SessionManager, options: TreeOptions, digests: ReadonlyMap<string, EntryDigest>): string[] {
  const previews = new Map<string, EntryPreview>();
  // as far into a text as a digest reads, so a preview does not depend on whether one was kept
  const reach = previewReach(DIGEST_COLUMNS);
  const roots = session.getOutline(
    (entry) => {
      const preview = entryPreview(entry, reach);
      // clipped now (as the line will show it, again unchanged): a slice of a body would keep the whole body alive
      previews.set(entry.id, { ...preview, text: clip(preview.text, TREE_PREVIEW_WIDTH) });
    },
    (id) => {
      const digest = digests.get(id);
      // a digest's preview is clipped wider: clipping it again gives what clipping the text would
      if (digest?.timestamp !== undefined) previews.set(id, { kind: digest.kind, text: clip(digest.preview, TREE_PREVIEW_WIDTH) });
      return digest?.timestamp;
    },
  );
  const render = { leafId: session.getLeafId(), activePath: new Set(session.getBranchIds()), showAll: options.all, depth: options.depth, previews };
  return renderTree(roots, colors(), render);
}

function printLines(lines: string[]): void {
  const c = colors();
  if (lines.length === 0) print(c.dim("(no entries)"));
  else print([...lines, c.dim(TREE_LEGEND)].join("\n"));
}
