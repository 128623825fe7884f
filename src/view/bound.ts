/**
 * Bounding an export (`--max-bytes`): when the bodies of a session do not fit, every text is
 * clipped to one common length, the longest that fits (the short ones stay whole), and each
 * clipped block says how much it lost; images that do not fit are left out with a note. When
 * that length would be too short to read (a session of tens of thousands of entries), the bodies
 * are kept in the caller's order of importance, clipped to a readable length, as many as fit, and
 * the rest are left out. The export then says in total what it left out. Pure.
 */
import type { Block } from "./blocks.js";
import { BodyMeasure, BodySource, jsonBytes, type Measured, payload } from "./body-measure.js";

export { BodySource, jsonBytes };

/** Bodies as a record, or made when first asked for (BodySource). */
type Bodies = Record<string, Block[]> | BodySource;
const sourceOf = (bodies: Bodies) => (bodies instanceof BodySource ? bodies : BodySource.of(bodies));

export interface BoundResult {
  bodies: Record<string, Block[]>;
  /** blocks clipped or left out, and the bytes of JSON that went with them (`estimated` when not every body was measured) */
  omitted: { blocks: number; bytes: number; estimated?: true };
}

/** What was left out of `measure`'s bodies when `size` bytes of them are kept. */
function leftOut(measure: BodyMeasure, blocks: number, size: number): BoundResult["omitted"] {
  const { bytes, estimated } = measure.approximate();
  return { blocks, bytes: Math.max(0, bytes - size), ...(estimated ? { estimated: true as const } : {}) };
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

export function clipAll(bodies: Record<string, Block[]>, cap: number, mark = true): BoundResult {
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

/** Below this common length (what a tree row's preview already shows), fewer bodies are kept instead, at READABLE. */
const MIN_COMMON = 100;
/** The length the bodies kept are clipped to when not all can be. */
export const READABLE = 1000;

/** The sizes of `bodies`, each measured when bounding first needs it; pass it when bounding the same bodies more than once. */
export function measureBodies(bodies: Bodies): BodyMeasure {
  return new BodyMeasure(sourceOf(bodies), (list) => list.map((b) => clipBlock(b, 0, false).block));
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

/** The first entries of `order` that fit `budget` with their texts clipped to `cap`: only those are measured. */
function firstThatFit(measure: BodyMeasure, order: readonly string[], cap: number, budget: number): string[] {
  const kept: string[] = [];
  let total = 2;
  for (const id of order) {
    const entry = measure.entry(id);
    if (!entry) continue;
    total += entry.fixed + sizeOf(entry.texts, cap);
    if (total > budget) break;
    kept.push(id);
  }
  return kept;
}

/** `bodies` with its texts clipped to `cap`, only the entries `keep` names when given; blocks left out are counted. */
function clipped(bodies: BodySource, measure: BodyMeasure, cap: number, keep?: readonly string[]): BoundResult {
  if (!keep) return clipAll(bodies.pick(), cap);
  const result = clipAll(bodies.pick(keep), cap);
  const kept = new Set(keep);
  for (const id of measure.ids()) if (!kept.has(id)) result.omitted.blocks += measure.blocks(id);
  return result;
}

/**
 * The bodies clipped so that their JSON takes at most `budget` bytes (as they are when they fit;
 * without `order`, a budget below what every text clipped to nothing takes is exceeded).
 * The length is found on the measured sizes, then checked on the real JSON and lowered until it
 * fits. With `order` (entry ids, most important first), a common length under MIN_COMMON keeps
 * the first bodies at READABLE instead, as many as fit, and leaves the others out; when the
 * lengths alone show that no common length of MIN_COMMON can fit, only those first bodies are
 * measured. Pass the measure when bounding the same bodies more than once.
 */
export function boundBodies(given: Bodies, budget: number, measure = measureBodies(given), order?: readonly string[]): BoundResult {
  const bodies = sourceOf(given);
  if (measure.floor(Number.POSITIVE_INFINITY) <= budget && measure.full <= budget) return { bodies: given instanceof BodySource ? bodies.pick() : given, omitted: { blocks: 0, bytes: 0 } };
  let target = budget;
  for (let attempt = 0; attempt < 8; attempt++) {
    const common = order && measure.floor(MIN_COMMON) > target ? 0 : longestFit(measure.all().texts, measure.all().fixed, target);
    const few = order && common < MIN_COMMON;
    const cap = few ? READABLE : common;
    const result = clipped(bodies, measure, cap, few ? firstThatFit(measure, order, cap, target) : undefined);
    const size = jsonBytes(result.bodies);
    if (size <= budget || target <= 0) return { bodies: result.bodies, omitted: leftOut(measure, result.omitted.blocks, size) };
    target -= size - budget + 64;
  }
  const result = clipped(bodies, measure, 0, order ? [] : undefined);
  return { bodies: result.bodies, omitted: leftOut(measure, result.omitted.blocks, jsonBytes(result.bodies)) };
}
