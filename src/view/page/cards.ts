/**
 * One entry of the shown path as a card, and one row of the tree. Compactions are boundaries:
 * tokens before and after, what they kept and summarized, who made them, the summary collapsed;
 * the entries a compaction summarized are greyed and point to it, its first kept entry is marked.
 */
import type { Block } from "../blocks.js";
import type { ViewNode } from "../model.js";
import { h, renderBlock } from "./render.js";

const fmt = (n: number) => n.toLocaleString("en-US");
/** A kind or type from the session as one piece of a class name: an entry typed "x selected" must not select its card. */
const classPart = (text: string) => text.replace(/[^a-zA-Z0-9_-]/g, "_");

/** What the shown path says about an entry: the compaction that summarized or kept it. */
export interface PathMark {
  summarizedBy?: string;
  firstKeptOf?: string;
}

/** For each compaction on a root-first path: the entries it summarized and its first kept one. */
export function pathMarks(path: readonly string[], byId: ReadonlyMap<string, ViewNode>): Map<string, PathMark> {
  const marks = new Map<string, PathMark>();
  const position = new Map<string, number>();
  path.forEach((id, i) => {
    if (!position.has(id)) position.set(id, i);
  });
  let start = 0;
  path.forEach((id, c) => {
    const info = byId.get(id)?.compaction;
    if (!info) return;
    const kept = position.get(info.firstKeptEntryId);
    const end = kept !== undefined && kept < c ? kept : c;
    for (let i = start; i < end; i++) {
      const node = byId.get(path[i]);
      if (node && node.type !== "compaction") marks.set(path[i], { ...marks.get(path[i]), summarizedBy: id });
    }
    if (kept !== undefined && kept < c) marks.set(path[kept], { ...marks.get(path[kept]), firstKeptOf: id });
    start = end;
  });
  return marks;
}

const link = (id: string, text = id) => h("a", { href: `#${id}`, class: "id-link" }, text);

function compactionMeta(node: ViewNode): HTMLElement {
  const c = node.compaction!;
  const parts: (Node | string)[] = [
    h("strong", {}, `${fmt(c.tokensBefore)} → ${fmt(c.tokensAfter)} tokens`),
    " · keeps from ",
    link(c.firstKeptEntryId),
  ];
  if (c.summarizedFrom) parts.push(` · summarizes ${fmt(c.summarizedCount)} entries from `, link(c.summarizedFrom));
  for (const [key, value] of Object.entries(c.details)) parts.push(` · ${key}: ${value}`);
  if (c.readFiles.length || c.modifiedFiles.length) parts.push(` · ${c.readFiles.length} read, ${c.modifiedFiles.length} modified files`);
  const meta = h("div", { class: "compaction-meta" }, ...parts);
  const files = [...c.readFiles.map((f) => `read      ${f}`), ...c.modifiedFiles.map((f) => `modified  ${f}`)];
  if (files.length > 0) meta.append(h("details", { class: "files" }, h("summary", {}, "files"), h("pre", {}, files.join("\n"))));
  if (c.moreDetails) meta.append(h("details", { class: "more-details" }, h("summary", {}, "details"), h("pre", {}, c.moreDetails)));
  if (c.dropped && c.dropped.length > 0) {
    const items = c.dropped.map((fact) => h("li", {}, `${fact.kind}: ${fact.text}`, ...(fact.entryId ? [" · ", link(fact.entryId)] : [])));
    meta.append(
      h("details", { class: "dropped" }, h("summary", {}, `not in the summary: ${c.dropped.length} of ${c.factsChecked} facts`), h("ul", {}, ...items)),
    );
  }
  return meta;
}

export interface CardState {
  selected: boolean;
  leaf: boolean;
  match: boolean;
  mark?: PathMark;
  /** undefined while the body is being fetched */
  body?: Block[];
  /** the timeline's numbers for this entry: bonsai's estimate of the context and the reported usage */
  context?: { estimate: number; usage?: number };
}

export function entryCard(node: ViewNode, state: CardState): HTMLElement {
  const classes = ["entry", `kind-${classPart(node.kind)}`, `type-${classPart(node.type)}`];
  if (state.selected) classes.push("selected");
  if (state.mark?.summarizedBy) classes.push("summarized");
  if (state.mark?.firstKeptOf) classes.push("first-kept");
  if (state.match) classes.push("match");
  if (node.flags.error) classes.push("error");
  const head = h("header", { class: "entry-head" }, h("span", { class: "kind" }, node.type === "compaction" ? "COMPACTION" : node.type === "branch_summary" ? "BRANCH SUMMARY" : node.kind));
  if (node.model) head.append(h("span", { class: "model" }, node.model));
  head.append(link(node.id), h("time", { datetime: node.timestamp }, node.timestamp.replace("T", " ").slice(0, 19)));
  if (node.tokens > 0) head.append(h("span", { class: "tokens" }, `~${fmt(node.tokens)} tok`));
  if (state.context) {
    const reported = state.context.usage !== undefined ? `, ${fmt(state.context.usage)} reported` : "";
    head.append(h("span", { class: "context", title: "the context after this turn: bonsai's estimate and the provider's usage" }, `context ~${fmt(state.context.estimate)}${reported}`));
  }
  if (node.label) head.append(h("span", { class: "label" }, node.label));
  if (state.leaf) head.append(h("span", { class: "leaf-badge" }, "← current leaf"));
  const card = h("article", { class: classes.join(" "), "data-id": node.id, id: `entry-${node.id}` }, head);
  if (state.mark?.firstKeptOf) card.append(h("div", { class: "kept-note" }, "▼ first entry kept by compaction ", link(state.mark.firstKeptOf)));
  if (state.mark?.summarizedBy) card.append(h("div", { class: "summarized-note" }, "summarized by compaction ", link(state.mark.summarizedBy)));
  if (node.compaction) card.append(compactionMeta(node));
  if (node.fromId) {
    const meta = h("div", { class: "branch-meta" }, "left the branch at ", link(node.fromId));
    if (node.describes?.length) {
      meta.append(": describes the branch from ");
      node.describes.forEach((id, i) => {
        meta.append(...(i > 0 ? [", "] : []), link(id));
      });
    }
    card.append(meta);
  }
  if (node.branchSummaryId) card.append(h("div", { class: "branch-meta" }, "this branch is described by the branch summary ", link(node.branchSummaryId)));
  const body = h("div", { class: "entry-body" });
  if (!state.body) body.append(h("div", { class: "muted loading" }, "loading…"));
  else body.append(...state.body.map((block) => (node.type === "compaction" && block.kind === "summary" ? compactionSummary(block) : renderBlock(block))));
  card.append(body);
  return card;
}

function compactionSummary(block: Block): HTMLElement {
  const lines = block.kind === "summary" ? block.text.split("\n").length : 0;
  const details = h("details", { class: "compaction-summary" }, h("summary", {}, `summary (${fmt(lines)} lines)`), renderBlock(block));
  return details;
}

export interface RowState {
  selected: boolean;
  onPath: boolean;
  leaf: boolean;
  collapsed: boolean;
  /** it can be collapsed: a fork point, or the first entry of a branch with more below */
  toggle: boolean;
  match: boolean;
}

export function treeRow(node: ViewNode, state: RowState): HTMLElement {
  const classes = ["tree-row", `type-${classPart(node.type)}`, `kind-${classPart(node.kind)}`];
  if (state.selected) classes.push("selected");
  if (state.onPath) classes.push("on-path");
  if (state.leaf) classes.push("leaf");
  if (state.match) classes.push("match");
  if (node.flags.error) classes.push("error");
  const row = h("div", { class: classes.join(" "), "data-id": node.id, role: "treeitem", "aria-selected": String(state.selected) });
  row.style.paddingLeft = `${4 + node.indent * 14}px`;
  const toggle = h("span", { class: "toggle" }, state.toggle ? (state.collapsed ? "▸" : "▾") : "");
  if (state.toggle) toggle.setAttribute("aria-expanded", String(!state.collapsed));
  row.append(toggle);
  const kind = node.type === "compaction" ? "compaction" : node.type === "branch_summary" ? "branch summary" : node.kind;
  row.append(h("span", { class: "kind" }, kind));
  if (node.children > 1) row.append(h("span", { class: "fork", title: "a fork point" }, `${node.children} branches`));
  if (node.label) row.append(h("span", { class: "label" }, node.label));
  if (node.branchSummaryId) row.append(h("span", { class: "summarized-badge", title: `described by the branch summary ${node.branchSummaryId}` }, "summarized"));
  row.append(h("span", { class: "preview" }, node.preview));
  if (state.leaf) row.append(h("span", { class: "leaf-badge" }, "← leaf"));
  return row;
}
