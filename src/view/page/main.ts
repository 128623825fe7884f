/**
 * The session page: the tree on the left (collapsible, filters and search narrow it), the shown
 * path on the right as cards under the token timeline. Both lists render only what is on screen
 * (virtual-list.ts). `#id` selects an entry; the keyboard moves through the tree. An exported
 * file carries its model; under `bonsai view` the page asks the server and follows its changes.
 */
import "./styles.css";
import type { Block } from "../blocks.js";
import type { ViewModel, ViewNode } from "../model.js";
import { entryCard, type PathMark, pathMarks, treeRow } from "./cards.js";
import { linkedId, linkTo } from "./deep-link.js";
import { h, headerText } from "./render.js";
import { embeddedSource, type PageSource, serverSource } from "./source.js";
import { renderTimeline } from "./timeline.js";
import { VirtualList } from "./virtual-list.js";

type FilterName = "user" | "noTools" | "labelled" | "errors";
const FILTERS: [FilterName, string][] = [
  ["user", "user only"],
  ["noTools", "no tool output"],
  ["labelled", "labelled"],
  ["errors", "errors"],
];

const config = JSON.parse(document.getElementById("bonsai-config")?.textContent ?? "{}") as { mode?: string };
const embedded = document.getElementById("bonsai-data")?.textContent;
const source: PageSource = config.mode === "live" || !embedded ? serverSource() : embeddedSource(JSON.parse(embedded) as ViewModel);

let model: ViewModel;
let byId = new Map<string, ViewNode>();
let indexOf = new Map<string, number>();
let childrenOf = new Map<string, string[]>();
let activeSet = new Set<string>();
let pointOf = new Map<string, { estimate: number; usage?: number }>();
const collapsed = new Set<string>();
const filters = new Set<FilterName>();
let matches: Set<string> | null = null;
let matchOrder: string[] = [];
let shownPath: string[] = [];
let shownSet = new Set<string>();
let marks = new Map<string, PathMark>();
let treeRows: number[] = [];
let entryRows: string[] = [];
/** position of each shown entry in entryRows */
let entryIndex = new Map<string, number>();
let selected: string | null = null;
const bodies = new Map<string, Block[]>();
const pending = new Set<string>();

// ------------------------------------------------------------------ layout
const app = document.getElementById("app")!;
const title = h("h1", {}, "session");
const info = h("div", { class: "info" });
const search = h("input", { type: "search", placeholder: "search all text  ( / )", "aria-label": "search", id: "search" });
const searchCount = h("span", { class: "search-count", id: "search-count" });
const filterBar = h("div", { class: "filters", role: "group", "aria-label": "filters" });
const theme = h("button", { type: "button", class: "theme", id: "theme", title: "light / dark (t)" }, "◐");
const status = h("span", { class: "status", id: "status" }, source.live ? "live" : "export");
const notice = h("div", { class: "notice-bar", id: "omitted" });
notice.hidden = true;
const treeScroller = h("div", { class: "tree", id: "tree", role: "tree", tabindex: "0" });
const timeline = h("section", { class: "timeline", id: "timeline", "aria-label": "token timeline" });
const entriesScroller = h("div", { class: "entries", id: "entries" });
app.append(
  h("header", { class: "top" }, h("div", { class: "titles" }, title, info), h("div", { class: "controls" }, search, searchCount, filterBar, theme, status)),
  notice,
  h("div", { class: "panes" }, h("aside", { class: "side" }, treeScroller), h("main", { class: "main" }, timeline, entriesScroller)),
);
for (const [name, text] of FILTERS) {
  const button = h("button", { type: "button", class: "filter", "data-filter": name, "aria-pressed": "false" }, text);
  button.addEventListener("click", () => {
    if (filters.has(name)) filters.delete(name);
    else filters.add(name);
    button.setAttribute("aria-pressed", String(filters.has(name)));
    rebuildTree();
    rebuildEntries();
  });
  filterBar.append(button);
}

// ------------------------------------------------------------------ theme
function applyTheme(name: string | null): void {
  if (name) document.documentElement.dataset.theme = name;
}
try {
  applyTheme(localStorage.getItem("bonsai-theme"));
} catch {
  // file:// pages may have no storage
}
theme.addEventListener("click", toggleTheme);
function toggleTheme(): void {
  const current = document.documentElement.dataset.theme ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  const next = current === "dark" ? "light" : "dark";
  applyTheme(next);
  try {
    localStorage.setItem("bonsai-theme", next);
  } catch {
    // ignored, as above
  }
}

// ------------------------------------------------------------------ model
function pathTo(id: string): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  let node = byId.get(id);
  while (node && !seen.has(node.id)) {
    seen.add(node.id);
    path.push(node.id);
    node = node.parentId ? byId.get(node.parentId) : undefined;
  }
  return path.reverse();
}

/** The tip of the branch through `id`: down the active path where it goes, else the newest child. */
function tipOf(id: string): string {
  let current = id;
  for (;;) {
    const kids = childrenOf.get(current) ?? [];
    if (kids.length === 0) return current;
    current = kids.find((k) => activeSet.has(k)) ?? kids[kids.length - 1];
  }
}

function setModel(next: ViewModel): void {
  model = next;
  byId = new Map(model.nodes.map((n) => [n.id, n]));
  indexOf = new Map(model.nodes.map((n, i) => [n.id, i]));
  childrenOf = new Map();
  for (const n of model.nodes) if (n.parentId) (childrenOf.get(n.parentId) ?? childrenOf.set(n.parentId, []).get(n.parentId)!).push(n.id);
  activeSet = new Set(model.activePath);
  pointOf = new Map(model.timeline.map((p) => [p.id, p]));
  if (model.bodies) for (const [id, blocks] of Object.entries(model.bodies)) bodies.set(id, blocks);
  title.textContent = headerText(model.session.name ?? model.session.id, 120);
  document.title = `${title.textContent} · bonsai`;
  info.textContent = `${headerText(model.session.location, 200)} · session ${headerText(model.session.id, 80)} · ${model.nodes.length.toLocaleString("en-US")} entries · leaf ${headerText(model.leafId ?? "none", 80)}`;
  if (model.omitted && model.omitted.blocks > 0) {
    notice.hidden = false;
    notice.textContent = `This export is bounded to ${model.omitted.maxBytes.toLocaleString("en-US")} bytes: ${model.omitted.blocks.toLocaleString("en-US")} blocks were clipped or left out (${model.omitted.estimated ? "about " : ""}${model.omitted.bytes.toLocaleString("en-US")} bytes); each says so where it was cut.`;
  }
  renderTimeline(timeline, model.timeline, model.threshold?.tokens ?? null, select);
}

function passes(node: ViewNode): boolean {
  if (filters.has("user") && !node.flags.user) return false;
  if (filters.has("noTools") && node.flags.tool) return false;
  if (filters.has("labelled") && !node.label) return false;
  if (filters.has("errors") && !node.flags.error) return false;
  return true;
}

const canToggle = (node: ViewNode) => node.children > 1 || (node.children > 0 && (childrenOf.get(node.parentId ?? "")?.length ?? 0) > 1);

// ------------------------------------------------------------------ tree
const tree = new VirtualList(treeScroller, {
  key: (i) => model.nodes[treeRows[i]].id,
  estimate: () => 24,
  overscan: 300,
  render: (i) => {
    const node = model.nodes[treeRows[i]];
    const row = treeRow(node, {
      selected: node.id === selected,
      onPath: activeSet.has(node.id),
      leaf: node.id === model.leafId,
      collapsed: collapsed.has(node.id),
      toggle: canToggle(node),
      match: matches?.has(node.id) ?? false,
    });
    row.addEventListener("click", (event) => {
      if ((event.target as HTMLElement).classList.contains("toggle") && canToggle(node)) toggleCollapse(node.id);
      else select(node.id);
    });
    return row;
  },
});

function rebuildTree(): void {
  const rows: number[] = [];
  const nodes = model.nodes;
  for (let i = 0; i < nodes.length; ) {
    const node = nodes[i];
    if (passes(node) && (!matches || matches.has(node.id))) rows.push(i);
    i = collapsed.has(node.id) ? Math.max(node.end, i + 1) : i + 1;
  }
  treeRows = rows;
  tree.setCount(rows.length);
}

/** The tree row showing entry `id`, or -1 (treeRows is in ascending order: a bisection). */
function treeRowOf(id: string | null): number {
  const target = id === null ? undefined : indexOf.get(id);
  if (target === undefined) return -1;
  let low = 0;
  let high = treeRows.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (treeRows[mid] === target) return mid;
    if (treeRows[mid] < target) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}

function toggleCollapse(id: string, open?: boolean): void {
  const close = open === undefined ? !collapsed.has(id) : !open;
  if (close) collapsed.add(id);
  else collapsed.delete(id);
  rebuildTree();
  const row = treeRowOf(id);
  if (row >= 0) tree.scrollToIndex(row, "nearest");
}

// ------------------------------------------------------------------ entries
const entries = new VirtualList(entriesScroller, {
  key: (i) => entryRows[i],
  estimate: (i) => {
    const node = byId.get(entryRows[i]);
    return node && node.type === "message" ? 120 : 56;
  },
  render: (i) => {
    const id = entryRows[i];
    const node = byId.get(id)!;
    const body = bodies.get(id);
    if (!body) requestBody(id);
    return entryCard(node, { selected: id === selected, leaf: id === model.leafId, match: matches?.has(id) ?? false, mark: marks.get(id), body, context: pointOf.get(id) });
  },
});

function rebuildEntries(): void {
  marks = pathMarks(shownPath, byId);
  entryRows = shownPath.filter((id) => {
    const node = byId.get(id);
    return node !== undefined && passes(node);
  });
  entryIndex = new Map(entryRows.map((id, i) => [id, i]));
  entries.setCount(entryRows.length);
}

function showPath(path: string[]): void {
  shownPath = path;
  shownSet = new Set(path);
  rebuildEntries();
}

let bodyTimer = 0;
function requestBody(id: string): void {
  if (pending.has(id)) return;
  pending.add(id);
  if (bodyTimer) return;
  bodyTimer = window.setTimeout(async () => {
    bodyTimer = 0;
    const ids = [...pending].slice(0, 200);
    try {
      const got = await source.bodies(ids);
      for (const id of ids) bodies.set(id, got[id] ?? []);
    } catch (error) {
      status.textContent = `could not load bodies: ${error instanceof Error ? error.message : String(error)}`;
      for (const id of ids) bodies.set(id, []);
    }
    for (const id of ids) pending.delete(id);
    entries.refreshRows(ids.flatMap((id) => entryIndex.get(id) ?? []));
    if (pending.size > 0) requestBody([...pending][0]);
  }, 16);
}

// ------------------------------------------------------------------ selection
function select(id: string): void {
  const node = byId.get(id);
  if (!node) return;
  selected = id;
  if (!shownSet.has(id)) showPath(pathTo(tipOf(id)));
  // open collapsed ancestors so the row can be shown
  let reopened = false;
  for (const ancestor of pathTo(id).slice(0, -1)) if (collapsed.delete(ancestor)) reopened = true;
  if (reopened) rebuildTree();
  tree.refresh();
  entries.refresh();
  const row = treeRowOf(id);
  if (row >= 0) tree.scrollToIndex(row, "nearest");
  const card = entryIndex.get(id);
  if (card !== undefined) entries.scrollToIndex(card);
  linkTo(id);
}

function moveSelection(step: number): void {
  if (treeRows.length === 0) return;
  const current = treeRowOf(selected);
  const next = Math.min(treeRows.length - 1, Math.max(0, current < 0 ? 0 : current + step));
  select(model.nodes[treeRows[next]].id);
}

// ------------------------------------------------------------------ search
let searchRun = 0;
async function runSearch(): Promise<void> {
  const query = search.value.trim();
  const run = ++searchRun;
  if (!query) {
    matches = null;
    matchOrder = [];
    searchCount.textContent = "";
  } else {
    const found = await source.search(query);
    if (run !== searchRun) return;
    matches = found;
    matchOrder = model.nodes.filter((n) => found.has(n.id)).map((n) => n.id);
    searchCount.textContent = `${found.size.toLocaleString("en-US")} ${found.size === 1 ? "match" : "matches"}`;
  }
  rebuildTree();
  entries.refresh();
}

function nextMatch(step: number): void {
  if (matchOrder.length === 0) return;
  const at = selected ? matchOrder.indexOf(selected) : -1;
  const next = at < 0 ? (step > 0 ? 0 : matchOrder.length - 1) : (at + step + matchOrder.length) % matchOrder.length;
  select(matchOrder[next]);
}

let searchTimer = 0;
search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = window.setTimeout(runSearch, 150);
});
search.addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    clearTimeout(searchTimer);
    void runSearch().then(() => nextMatch(event.shiftKey ? -1 : 1));
  } else if (event.key === "Escape") {
    search.value = "";
    void runSearch();
    search.blur();
  }
});

// ------------------------------------------------------------------ keyboard
document.addEventListener("keydown", (event) => {
  const target = event.target as HTMLElement;
  if (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key;
  if (key === "ArrowDown" || key === "j") moveSelection(1);
  else if (key === "ArrowUp" || key === "k") moveSelection(-1);
  else if (key === "PageDown") moveSelection(20);
  else if (key === "PageUp") moveSelection(-20);
  else if ((key === "ArrowLeft" || key === "h") && selected) toggleCollapse(selected, false);
  else if ((key === "ArrowRight" || key === "l") && selected) toggleCollapse(selected, true);
  else if (key === "/") search.focus();
  else if (key === "n") nextMatch(1);
  else if (key === "N") nextMatch(-1);
  else if (key === "t") toggleTheme();
  else if (key === "g" && model.leafId) select(model.leafId);
  else return;
  event.preventDefault();
});

window.addEventListener("hashchange", () => select(linkedId()));
window.addEventListener("resize", () => renderTimeline(timeline, model.timeline, model.threshold?.tokens ?? null, select));

// ------------------------------------------------------------------ start and live updates
async function start(): Promise<void> {
  setModel(await source.model());
  rebuildTree();
  showPath(model.activePath);
  const hash = linkedId();
  if (hash && byId.has(hash)) select(hash);
  else if (model.leafId) {
    selected = model.leafId;
    tree.refresh();
    const row = treeRowOf(model.leafId);
    if (row >= 0) tree.scrollToIndex(row, "nearest");
    entries.scrollToIndex(entryRows.length - 1);
  }
  document.body.dataset.ready = "true";
  source.onChange(() => void reload());
}

async function reload(): Promise<void> {
  const following = shownPath.length === 0 || shownPath[shownPath.length - 1] === model.activePath[model.activePath.length - 1];
  const tip = shownPath[shownPath.length - 1];
  const next = await source.model();
  // bodies of entries that changed (a prune, a restore) are fetched again
  for (const node of next.nodes) if (byId.get(node.id)?.flags.pruned !== node.flags.pruned) bodies.delete(node.id);
  setModel(next);
  rebuildTree();
  showPath(following || !tip || !byId.has(tip) ? model.activePath : pathTo(tipOf(tip)));
  if (following) entries.scrollToIndex(entryRows.length - 1);
  status.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
  document.body.dataset.version = String(model.version);
}

start().catch((error) => {
  app.replaceChildren(h("pre", { class: "fatal" }, `bonsai: the page could not start: ${error instanceof Error ? error.message : String(error)}`));
});
