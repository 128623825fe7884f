/**
 * Markdown summaries as data for the extractive summarizer: sections of items, read from an
 * earlier summary (ours or an LLM's), merged without duplicates, and rendered with bounds.
 */

export type ItemStyle = "bullet" | "done" | "open" | "numbered" | "plain";

export interface SectionSpec {
  title: string;
  /** 2 for `##`, 3 for `###` */
  level: 2 | 3;
  style: ItemStyle;
  /** a `##` heading with `###` subsections and no items of its own */
  group?: boolean;
  /** which end to keep when there are too many items: the first (goals) or the latest (progress) */
  keep?: "first" | "last";
  /** overrides the default item bound */
  maxItems?: number;
}

export const MAX_ITEMS = 40;
export const MAX_ITEM_CHARS = 300;
export const NONE = "(none)";

/**
 * One line, at most `max` characters, cut at a word boundary when one is near (messages/preview.ts
 * clip cuts where the limit falls: a summary item should not end in half a word).
 */
export function clipAtWord(text: string, max = MAX_ITEM_CHARS): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

const itemKey = (item: string) =>
  item
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/\s+/g, " ")
    .replace(/[.:;,]+$/, "")
    .trim();

/** Union in order of first appearance; items equal up to case, markup and spacing count once. */
export function mergeItems(...lists: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of lists) {
    for (const item of list) {
      const key = itemKey(item);
      if (!key || key === NONE || seen.has(key)) continue;
      seen.add(key);
      out.push(item);
    }
  }
  return out;
}

/** Strips list markers and checkboxes: "- [x] Ran tests" → "Ran tests". */
function itemText(line: string): string {
  return line
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "")
    .replace(/^\[[ xX]\]\s*/, "")
    .trim();
}

export interface ParsedSummary {
  /** items per heading title (both `##` and `###`), in order of appearance */
  sections: Map<string, string[]>;
  /** paths from `<read-files>` / `<modified-files>` blocks */
  readFiles: string[];
  modifiedFiles: string[];
}

const FILE_BLOCK = /<(read-files|modified-files)>\n?([\s\S]*?)\n?<\/\1>/g;

export function parseSummary(markdown: string): ParsedSummary {
  const result: ParsedSummary = { sections: new Map(), readFiles: [], modifiedFiles: [] };
  const withoutFiles = markdown.replace(FILE_BLOCK, (_m, tag: string, body: string) => {
    // OMP joined paths with a literal backslash-n; accept both.
    const paths = body
      .split(/\n|\\n/)
      .map((p) => p.trim())
      .filter(Boolean);
    (tag === "read-files" ? result.readFiles : result.modifiedFiles).push(...paths);
    return "";
  });
  let current: string[] | undefined;
  let inFence = false;
  for (const raw of withoutFiles.split("\n")) {
    const line = raw.trimEnd();
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,4}\s+(.+?)\s*#*$/.exec(line);
    if (heading) {
      const title = heading[1].replace(/\*\*/g, "").trim();
      current = result.sections.get(title) ?? [];
      result.sections.set(title, current);
      continue;
    }
    // A line that is only bold text is a heading of another layout (the split-turn heading), not an item.
    if (!current || !line.trim() || /^_\(extractive summary/.test(line.trim()) || /^-{3,}$/.test(line.trim()) || /^\*\*[^*]+\*\*$/.test(line.trim())) continue;
    const text = itemText(line);
    if (text && text !== NONE) current.push(text);
  }
  return result;
}

function renderItem(item: string, style: ItemStyle, index: number): string {
  switch (style) {
    case "done":
      return `- [x] ${item}`;
    case "open":
      return `- [ ] ${item}`;
    case "numbered":
      return `${index + 1}. ${item}`;
    case "plain":
      return item;
    default:
      return `- ${item}`;
  }
}

/** Bounded items: at most `max`, each one line of at most MAX_ITEM_CHARS. */
export function boundItems(items: readonly string[], max = MAX_ITEMS, keep: "first" | "last" = "first"): string[] {
  const clipped = mergeItems(items.map((item) => clipAtWord(item)));
  if (clipped.length <= max) return clipped;
  return keep === "first" ? clipped.slice(0, max) : clipped.slice(-max);
}

export function renderSections(specs: readonly SectionSpec[], items: ReadonlyMap<string, readonly string[]>): string {
  const out: string[] = [];
  for (const spec of specs) {
    out.push(`${"#".repeat(spec.level)} ${spec.title}`);
    if (spec.group) continue;
    const bounded = boundItems(items.get(spec.title) ?? [], spec.maxItems ?? MAX_ITEMS, spec.keep);
    if (bounded.length === 0) out.push(NONE);
    else out.push(...bounded.map((item, index) => renderItem(item, spec.style, index)));
    out.push("");
  }
  return out.join("\n").trim();
}
