/**
 * Bounding an export (`--max-bytes`): when the bodies of a session do not fit, every text is
 * clipped to one common length, the longest that fits (the short ones stay whole), and each
 * clipped block says how much it lost; images that do not fit are left out with a note. When
 * that length would be too short to read (a session of tens of thousands of entries), the bodies
 * are kept in the caller's order of importance, clipped to a readable length, as many as fit, and
 * the rest are left out. The export then says in total what it left out. Pure.
 */
import type { Block } from "./blocks.js";

/** UTF-8 bytes of a value as JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

export interface BoundResult {
  bodies: Record<string, Block[]>;
  /** blocks clipped or left out, and the bytes of JSON that went with them */
  omitted: { blocks: number; bytes: number };
}

/** The text a block carries that may be clipped, or undefined when it has none. */
function payload(block: Block): string | undefined {
  switch (block.kind) {
    case "text":
    case "thinking":
    case "output":
    case "summary":
    case "meta":
      return block.text;
    case "toolCall":
      return block.args;
    case "image":
      return block.data;
    default:
      return undefined;
  }
}

/** The block with its text replaced. */
function withPayload(block: Block, text: string): Block {
  if (block.kind === "toolCall") return { ...block, args: text };
  if (block.kind === "image") return { ...block, data: text };
  return { ...block, text } as Block;
}

/** `block` with its text cut to `cap` characters and marked; unmarked (`mark` false), only emptied to measure the rest. */
function clipBlock(block: Block, cap: number, mark = true): { block: Block; clipped: boolean } {
  if (block.kind === "pruned") {
    if (!block.original) return { block, clipped: false };
    let clipped = false;
    const original = block.original.map((b) => {
      const r = clipBlock(b, cap, mark);
      clipped ||= r.clipped;
      return r.block;
    });
    return { block: { ...block, original }, clipped };
  }
  const text = payload(block);
  if (text === undefined || text.length <= cap) return { block, clipped: false };
  if (!mark) return { block: withPayload(block, ""), clipped: false };
  if (block.kind === "image") {
    return { block: { kind: "meta", text: `image (${block.mimeType}, ${Math.round((text.length * 3) / 4 / 1024)} KB) left out of this export`, clipped: text.length }, clipped: true };
  }
  // never cut a surrogate pair in half
  let end = cap;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  const left = text.length - end;
  return { block: { ...withPayload(block, text.slice(0, end)), clipped: left } as Block, clipped: true };
}

function clipAll(bodies: Record<string, Block[]>, cap: number, mark = true): BoundResult {
  const out: Record<string, Block[]> = {};
  let blocks = 0;
  for (const [id, list] of Object.entries(bodies)) {
    out[id] = list.map((b) => {
      const r = clipBlock(b, cap, mark);
      if (r.clipped) blocks++;
      return r.block;
    });
  }
  return { bodies: out, omitted: { blocks, bytes: 0 } };
}

/** A text this long or shorter is measured whole; a longer one from samples of it. */
const MEASURED_WHOLE = 8 * 1024;
const SAMPLE = 4096;
/** Below this common length (what a tree row's preview already shows), fewer bodies are kept instead, at READABLE. */
const MIN_COMMON = 100;
/** The length the bodies kept are clipped to when not all can be. */
export const READABLE = 1000;

/**
 * Bytes per character of `text` as JSON inside the page, where each `<` is escaped
 * (html.ts, inlineJson): exact up to MEASURED_WHOLE, from three samples beyond.
 */
function measureText(text: string): Measured {
  const parts = text.length <= MEASURED_WHOLE ? [text] : [0, (text.length - SAMPLE) >> 1, text.length - SAMPLE].map((at) => text.slice(at, at + SAMPLE));
  let json = 0;
  let escapes = 0;
  for (const part of parts) {
    json += jsonBytes(part) - 2;
    escapes += 5 * count(part, "<");
  }
  const measured = parts.reduce((n, p) => n + p.length, 0);
  return { length: text.length, ratio: (json + escapes) / measured, json: Math.round((json * text.length) / measured) };
}

function count(text: string, char: string): number {
  let n = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) n++;
  return n;
}

interface Measured {
  length: number;
  /** bytes per character in the page */
  ratio: number;
  /** bytes as plain JSON, without quotes */
  json: number;
}

/** The sizes bounding needs, measured once for any number of budgets (measureBodies). */
export interface BodyMeasure {
  /** the bodies' plain JSON bytes, exact unless `estimated` */
  full: number;
  /** every clippable text: its length and bytes per character */
  texts: Measured[];
  /** bytes of everything but the texts */
  fixed: number;
  /** by entry: its blocks, the bytes of its member but the texts, and its texts */
  entries: Map<string, { blocks: number; fixed: number; texts: Measured[] }>;
  /** some text was measured from samples */
  estimated: boolean;
}

export function measureBodies(bodies: Record<string, Block[]>): BodyMeasure {
  const all: Measured[] = [];
  const entries = new Map<string, { blocks: number; fixed: number; texts: Measured[] }>();
  let estimated = false;
  // `{` and `}`, less the comma the last member does not have
  let fixed = Object.keys(bodies).length > 0 ? 1 : 2;
  for (const [id, list] of Object.entries(bodies)) {
    const texts: Measured[] = [];
    const visit = (blocks: readonly Block[]) => {
      for (const block of blocks) {
        if (block.kind === "pruned") visit(block.original ?? []);
        const text = payload(block);
        if (text === undefined || text.length === 0) continue;
        estimated ||= text.length > MEASURED_WHOLE;
        texts.push(measureText(text));
      }
    };
    visit(list);
    // the rest is measured with every text emptied (each leaves its two quotes), with its key and comma
    const member = jsonBytes(id) + 2 + jsonBytes(list.map((b) => clipBlock(b, 0, false).block));
    entries.set(id, { blocks: list.length, fixed: member, texts });
    fixed += member;
    all.push(...texts);
  }
  const full = all.reduce((n, t) => n + t.json, fixed);
  return { full, texts: all, fixed, entries, estimated };
}

/** Estimated bytes of `texts` clipped to `cap`: a clipped block also carries `"clipped":N,`. */
function sizeOf(texts: readonly Measured[], cap: number): number {
  let total = 0;
  for (const t of texts) total += Math.min(t.length, cap) * t.ratio + (t.length > cap ? 20 : 0);
  return total;
}

/** The longest common length whose estimated total fits `budget`. */
function longestFit(texts: readonly Measured[], fixed: number, budget: number): number {
  let low = 0;
  let high = texts.reduce((n, t) => Math.max(n, t.length), 0);
  while (low < high) {
    const cap = Math.ceil((low + high) / 2);
    if (fixed + sizeOf(texts, cap) <= budget) low = cap;
    else high = cap - 1;
  }
  return low;
}

/** The first entries of `order` that fit `budget` with their texts clipped to `cap`. */
function firstThatFit(measure: BodyMeasure, order: readonly string[], cap: number, budget: number): string[] {
  const kept: string[] = [];
  let total = 2;
  for (const id of order) {
    const entry = measure.entries.get(id);
    if (!entry) continue;
    total += entry.fixed + sizeOf(entry.texts, cap);
    if (total > budget) break;
    kept.push(id);
  }
  return kept;
}

/** `bodies` with its texts clipped to `cap`, only the entries `keep` names when given; blocks left out are counted. */
function clipped(bodies: Record<string, Block[]>, measure: BodyMeasure, cap: number, keep?: readonly string[]): BoundResult {
  if (!keep) return clipAll(bodies, cap);
  const result = clipAll(Object.fromEntries(keep.map((id) => [id, bodies[id]])), cap);
  const kept = new Set(keep);
  for (const [id, entry] of measure.entries) if (!kept.has(id)) result.omitted.blocks += entry.blocks;
  return result;
}

/**
 * The bodies clipped so that their JSON takes at most `budget` bytes (as they are when they fit;
 * without `order`, a budget below what every text clipped to nothing takes is exceeded).
 * The length is found on the measured sizes, then checked on the real JSON and lowered until it
 * fits. With `order` (entry ids, most important first), a common length under MIN_COMMON keeps
 * the first bodies at that length instead, as many as fit, and leaves the others out. Pass the
 * measure when bounding the same bodies more than once.
 */
export function boundBodies(bodies: Record<string, Block[]>, budget: number, measure = measureBodies(bodies), order?: readonly string[]): BoundResult {
  const full = measure.estimated && measure.full <= budget ? jsonBytes(bodies) : measure.full;
  if (full <= budget) return { bodies, omitted: { blocks: 0, bytes: 0 } };
  let target = budget;
  for (let attempt = 0; attempt < 8; attempt++) {
    const common = longestFit(measure.texts, measure.fixed, target);
    const few = order && common < MIN_COMMON;
    const cap = few ? READABLE : common;
    const result = clipped(bodies, measure, cap, few ? firstThatFit(measure, order, cap, target) : undefined);
    const size = jsonBytes(result.bodies);
    if (size <= budget || target <= 0) return { bodies: result.bodies, omitted: { blocks: result.omitted.blocks, bytes: full - size } };
    target -= size - budget + 64;
  }
  const result = clipped(bodies, measure, 0, order ? [] : undefined);
  return { bodies: result.bodies, omitted: { blocks: result.omitted.blocks, bytes: full - jsonBytes(result.bodies) } };
}
