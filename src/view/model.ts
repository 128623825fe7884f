/**
 * What the session page shows, as plain data (docs/ARCHITECTURE.md, "See a session"): the tree
 * flattened depth first with what each row needs (indent, fork, label, flags, a preview), the
 * compactions with what they summarized and kept, the timeline of the active path, and, for an
 * export, every body. `bonsai view` sends the same model without bodies and serves those on
 * demand. Built from a session read once; pure.
 */
import { nativeLine } from "../summarizer/native-lane.js";
import { summarizedRange } from "../format/context.js";
import { isCheckoutMarker, type SessionEntry, type SessionHeader, type SessionTreeNode } from "../format/entry-types.js";
import { withoutHidden } from "../format/tree-nodes.js";
import { type CompactionDrops, type DroppedFact, droppedAt } from "../ops/dropped.js";
import { type ArchivedOriginals, type Block, entryBlocks } from "./blocks.js";
import { type DigestedEntry, type EntryDigest, type EntryRow, digestOf, entryRow, isDigested, isStandIn, type NodeFlags } from "./entry-digest.js";
import { compactionEstimate, type EntryFigures, entryFigures, type TimelinePoint, timelineOf } from "./timeline.js";

export type { NodeFlags };

export interface CompactionInfo {
  firstKeptEntryId: string;
  tokensBefore: number;
  /** estimated context right after it (the context at the compaction entry) */
  tokensAfter: number;
  /** entries on its path that its summary stands for: the first and how many carry a message */
  summarizedFrom: string | null;
  summarizedCount: number;
  /** scalar fields of `details` (summarizer, method, …) and who made it */
  details: Record<string, string>;
  readFiles: string[];
  modifiedFiles: string[];
  /** the other fields of `details` (a coverage report, …) as JSON; absent when there are none */
  moreDetails?: string;
  /**
   * what the summarized span held that the summary does not mention (ops/dropped.ts), and how
   * many facts were looked for; absent when not looked for (a Markdown export, which shows neither)
   */
  dropped?: DroppedFact[];
  factsChecked?: number;
}

export interface ViewNode {
  id: string;
  /** the nearest shown ancestor (checkout markers are left out of the page) */
  parentId: string | null;
  type: string;
  /** a message's role, or the entry kind (entryPreview) */
  kind: string;
  /** forks above it: how far the tree indents it */
  indent: number;
  /** shown children */
  children: number;
  /** index after its subtree in `nodes` (depth first: a subtree is one run) */
  end: number;
  preview: string;
  timestamp: string;
  label?: string;
  /** estimated tokens of its message (0 without one) */
  tokens: number;
  flags: NodeFlags;
  model?: string;
  compaction?: CompactionInfo;
  /** a branch summary: the entry it hangs off */
  fromId?: string;
  /** a branch summary: the first entries of the branches beside it, which it describes */
  describes?: string[];
  /** the first entry of a branch a branch summary beside it describes: that summary */
  branchSummaryId?: string;
}

export interface ViewModel {
  session: { id: string; name: string | null; cwd: string; timestamp: string; location: string };
  leafId: string | null;
  /** depth first, children in tree order */
  nodes: ViewNode[];
  /** ids of the active path, root first */
  activePath: string[];
  timeline: TimelinePoint[];
  /** tokens at which the context is compacted (window - reserve); null when the window is unknown */
  threshold: { contextWindow: number; reserveTokens: number; tokens: number } | null;
  /** an export: every body by entry id; absent for `bonsai view`, which serves them on demand */
  bodies?: Record<string, Block[]>;
  /** what bounding the export left out */
  omitted?: { blocks: number; bytes: number; maxBytes: number; estimated?: true };
  /** bumped by `bonsai view` on every change it sends */
  version: number;
}

export interface ViewInput {
  header: SessionHeader;
  name?: string;
  location: string;
  entries: readonly SessionEntry[];
  tree: readonly SessionTreeNode[];
  leafId: string | null;
  /** root-first path to the leaf, including every entry */
  activePath: readonly SessionEntry[];
  archived?: ArchivedOriginals;
  contextWindow?: number;
  reserveTokens: number;
  /** include every body (an export) */
  withBodies?: boolean;
  /** look for what each compaction dropped (default true) */
  withDrops?: boolean;
  /**
   * what each compaction dropped, by compaction id, kept by a caller that builds the model of the
   * same session again (`bonsai view`): found once, since a compaction's span does not change
   * while the file is only appended to. The caller starts a new one when the file is rewritten.
   */
  drops?: Map<string, CompactionDrops>;
  /**
   * The digests of message entries by id (entry-digest.ts), kept by a caller that reads the same
   * session again: a message entry in `entries` may then be a stand-in without its body (type,
   * id and parent id), read through its digest. Digests worked out here are added.
   */
  digests?: Map<string, EntryDigest>;
}

/** The digest of each message entry: kept, or worked out from its body (and kept). */
function digestsOf(input: ViewInput): (entry: DigestedEntry, blocks?: Block[]) => EntryDigest {
  const digests = input.digests ?? new Map<string, EntryDigest>();
  return (entry, blocks) => {
    let digest = digests.get(entry.id);
    if (!digest) {
      if (isStandIn(entry)) throw new Error(`entry ${entry.id}: neither its body nor its digest was read`);
      digest = digestOf(entry, blocks);
      digests.set(entry.id, digest);
    }
    return digest;
  };
}

/** The timeline's figures of an entry, from its digest when it has one. */
function figuresOf(digest: (entry: DigestedEntry) => EntryDigest): EntryFigures {
  return {
    tokens: (entry) => (isDigested(entry) ? digest(entry).tokens : entryFigures.tokens(entry)),
    reported: (entry) => (entry.type === "message" ? (digest(entry).usage ?? 0) : 0),
    isTurn: (entry) => entry.type === "message" && digest(entry).kind === "assistant",
    carries: (entry) => (isDigested(entry) ? !digest(entry).noMessage : entryFigures.carries(entry)),
  };
}

function scalarDetails(entry: SessionEntry & { type: "compaction" }): Record<string, string> {
  const out: Record<string, string> = {};
  if (entry.fromHook || entry.fromExtension) out.madeBy = "hook";
  const details = entry.details;
  if (details && typeof details === "object") {
    for (const [key, value] of Object.entries(details)) {
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[key] = String(value);
    }
    const native = nativeLine((details as { native?: unknown }).native);
    if (native) out.native = native;
  }
  return out;
}

/** The fields of `details` that are neither scalars nor the file lists, as indented JSON. */
function otherDetails(details: unknown): string | undefined {
  if (!details || typeof details !== "object") return undefined;
  const rest = Object.entries(details).filter(([key, value]) => key !== "readFiles" && key !== "modifiedFiles" && value !== null && typeof value === "object");
  return rest.length > 0 ? JSON.stringify(Object.fromEntries(rest), null, 2) : undefined;
}

function fileList(details: unknown, key: "readFiles" | "modifiedFiles"): string[] {
  const list = details && typeof details === "object" ? (details as Record<string, unknown>)[key] : undefined;
  return Array.isArray(list) ? list.filter((f): f is string => typeof f === "string") : [];
}

/**
 * Root-first paths through parent links, each walked only up to the nearest ancestor whose path
 * is already known: the paths to a branch's compactions (visited root first) cost its length once.
 */
export function pathFinder(byId: ReadonlyMap<string, SessionEntry>): (id: string) => SessionEntry[] {
  const known = new Map<string, SessionEntry[]>();
  return (id) => {
    const tail: SessionEntry[] = [];
    const seen = new Set<string>();
    let head: SessionEntry[] = [];
    let entry = byId.get(id);
    while (entry && !seen.has(entry.id)) {
      const above = known.get(entry.id);
      if (above) {
        head = above;
        break;
      }
      seen.add(entry.id);
      tail.push(entry);
      entry = entry.parentId ? byId.get(entry.parentId) : undefined;
    }
    const path = head.concat(tail.reverse());
    // a walk that ended on a repeat (a parent cycle, which the forest breaks) is no path to build on
    if (!(entry && seen.has(entry.id))) known.set(id, path);
    return path;
  };
}

const dropsOf = (drops: CompactionDrops) => ({ dropped: drops.dropped, factsChecked: drops.facts });

function memoized<T>(memo: Map<string, T> | undefined, key: string, make: () => T): T {
  const known = memo?.get(key);
  if (known !== undefined) return known;
  const made = make();
  memo?.set(key, made);
  return made;
}

/** droppedAt, which reads every body of the span: a path of stand-ins would find facts missing, not none. */
function droppedFrom(path: readonly SessionEntry[], c: number): CompactionDrops {
  if (path.some(isStandIn)) throw new Error(`what compaction ${path[c].id} dropped needs the bodies of its path, which were not read`);
  return droppedAt(path, c);
}

/**
 * What a compaction at the end of `path` stands for: the entries from where the previous
 * compaction's kept entries began (or the root) up to its own first kept entry.
 */
function compactionInfo(path: readonly SessionEntry[], figures: EntryFigures, withDrops: boolean, memo?: Map<string, CompactionDrops>): CompactionInfo {
  const c = path.length - 1;
  const entry = path[c] as SessionEntry & { type: "compaction" };
  const [start, end] = summarizedRange(path, c);
  const summarized = path.slice(start, end).filter(figures.carries);
  return {
    firstKeptEntryId: entry.firstKeptEntryId,
    tokensBefore: entry.tokensBefore,
    tokensAfter: compactionEstimate(path, c, figures),
    summarizedFrom: summarized[0]?.id ?? null,
    summarizedCount: summarized.length,
    details: scalarDetails(entry),
    readFiles: fileList(entry.details, "readFiles"),
    modifiedFiles: fileList(entry.details, "modifiedFiles"),
    ...(otherDetails(entry.details) ? { moreDetails: otherDetails(entry.details) } : {}),
    ...(withDrops ? dropsOf(memoized(memo, entry.id, () => droppedFrom(path, c))) : {}),
  };
}

/**
 * A branch summary hangs off the entry where a branch was left, beside that branch: it describes
 * its siblings, which are marked with it.
 */
function markSummarizedBranches(nodes: ViewNode[]): void {
  const children = new Map<string, ViewNode[]>();
  for (const node of nodes) {
    if (node.parentId === null) continue;
    const list = children.get(node.parentId);
    if (list) list.push(node);
    else children.set(node.parentId, [node]);
  }
  for (const node of nodes) {
    if (node.type !== "branch_summary" || node.parentId === null) continue;
    const siblings = (children.get(node.parentId) ?? []).filter((n) => n !== node && n.type !== "branch_summary");
    node.describes = siblings.map((n) => n.id);
    for (const sibling of siblings) sibling.branchSummaryId ??= node.id;
  }
}

// a row's timestamp is its entry's, absent when the line has none
const digestRow = (digest: EntryDigest): EntryRow => ({ kind: digest.kind, preview: digest.preview, timestamp: digest.timestamp as string, tokens: digest.tokens, flags: digest.flags });

export function buildViewModel(input: ViewInput): ViewModel {
  const byId = new Map(input.entries.map((e) => [e.id, e]));
  const pathTo = pathFinder(byId);
  const digestFor = digestsOf(input);
  const figures = figuresOf(digestFor);
  const nodes: ViewNode[] = [];
  const bodies: Record<string, Block[]> = {};
  type Item = { node: SessionTreeNode; parentId: string | null; indent: number; exit?: number };
  const visible = (children: readonly SessionTreeNode[]) => withoutHidden(children, isCheckoutMarker);
  const stack: Item[] = visible(input.tree)
    .reverse()
    .map((node, _, all) => ({ node, parentId: null, indent: all.length > 1 ? 1 : 0 }));
  // depth first; an item with `exit` closes its node's subtree
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.exit !== undefined) {
      nodes[item.exit].end = nodes.length;
      continue;
    }
    const { entry } = item.node;
    const kids = visible(item.node.children);
    const blocks = input.withBodies ? entryBlocks(entry, input.archived) : undefined;
    if (blocks) bodies[entry.id] = blocks;
    // a message's row from its digest (worked out from its blocks when there are any: without
    // archived originals they are the digest's, and a pruned result's lengths are not kept)
    const digest = isDigested(entry) ? digestFor(entry, blocks) : undefined;
    const row: ViewNode = { id: entry.id, parentId: item.parentId, type: entry.type, indent: item.indent, children: kids.length, end: 0, ...(digest ? digestRow(digest) : entryRow(entry)) };
    if (item.node.label !== undefined) row.label = item.node.label;
    if (entry.type === "message" && digest?.kind === "assistant") row.model = digest.model;
    if (entry.type === "compaction") row.compaction = compactionInfo(pathTo(entry.id), figures, input.withDrops ?? true, input.drops);
    if (entry.type === "branch_summary") row.fromId = entry.fromId;
    stack.push({ node: item.node, parentId: null, indent: 0, exit: nodes.length });
    nodes.push(row);
    const indent = kids.length > 1 ? item.indent + 1 : item.indent;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i], parentId: entry.id, indent });
  }
  markSummarizedBranches(nodes);
  const shown = new Set(nodes.map((n) => n.id));
  let leafId = input.leafId;
  // a leaf on a checkout marker is shown at the entry the marker moved to
  while (leafId && !shown.has(leafId)) leafId = byId.get(leafId)?.parentId ?? null;
  const window = input.contextWindow ?? 0;
  return {
    session: {
      id: input.header.id,
      name: input.name ?? null,
      cwd: input.header.cwd,
      timestamp: input.header.timestamp,
      location: input.location,
    },
    leafId,
    nodes,
    activePath: input.activePath.filter((e) => shown.has(e.id)).map((e) => e.id),
    timeline: timelineOf(input.activePath, figures),
    threshold: window > 0 ? { contextWindow: window, reserveTokens: input.reserveTokens, tokens: Math.max(0, window - input.reserveTokens) } : null,
    ...(input.withBodies ? { bodies } : {}),
    version: 0,
  };
}
