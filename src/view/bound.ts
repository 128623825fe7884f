/**
 * Bounding an export (`--max-bytes`): when the bodies of a session do not fit, every text is
 * clipped to one common length, the longest that fits (the short ones stay whole), and each
 * clipped block says how much it lost; images that do not fit are left out with a note. The
 * export then says in total what it left out. Pure.
 */
import type { Block } from "./blocks.js";

const encoder = new TextEncoder();

/** UTF-8 bytes of a value as JSON. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
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

function clipBlock(block: Block, cap: number): { block: Block; clipped: boolean } {
  if (block.kind === "pruned") {
    if (!block.original) return { block, clipped: false };
    let clipped = false;
    const original = block.original.map((b) => {
      const r = clipBlock(b, cap);
      clipped ||= r.clipped;
      return r.block;
    });
    return { block: { ...block, original }, clipped };
  }
  const text = payload(block);
  if (text === undefined || text.length <= cap) return { block, clipped: false };
  if (block.kind === "image") {
    return { block: { kind: "meta", text: `image (${block.mimeType}, ${Math.round((text.length * 3) / 4 / 1024)} KB) left out of this export`, clipped: text.length }, clipped: true };
  }
  // never cut a surrogate pair in half
  let end = cap;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  const left = text.length - end;
  const clippedText = text.slice(0, end);
  if (block.kind === "toolCall") return { block: { ...block, args: clippedText, clipped: left }, clipped: true };
  return { block: { ...block, text: clippedText, clipped: left } as Block, clipped: true };
}

function clipAll(bodies: Record<string, Block[]>, cap: number): BoundResult {
  const out: Record<string, Block[]> = {};
  let blocks = 0;
  for (const [id, list] of Object.entries(bodies)) {
    out[id] = list.map((b) => {
      const r = clipBlock(b, cap);
      if (r.clipped) blocks++;
      return r.block;
    });
  }
  return { bodies: out, omitted: { blocks, bytes: 0 } };
}

/** Every clippable text of the bodies: its length, and JSON bytes per character. */
function payloads(bodies: Record<string, Block[]>): { length: number; ratio: number }[] {
  const out: { length: number; ratio: number }[] = [];
  const visit = (list: readonly Block[]) => {
    for (const block of list) {
      if (block.kind === "pruned") visit(block.original ?? []);
      const text = payload(block);
      if (text !== undefined && text.length > 0) out.push({ length: text.length, ratio: jsonBytes(text) / text.length });
    }
  };
  for (const list of Object.values(bodies)) visit(list);
  return out;
}

/** The longest common length whose estimated total fits `budget`. */
function longestFit(texts: readonly { length: number; ratio: number }[], fixed: number, budget: number): number {
  // a clipped block also carries `"clipped":N,`
  const total = (cap: number) => texts.reduce((n, t) => n + Math.min(t.length, cap) * t.ratio + (t.length > cap ? 20 : 0), fixed);
  let low = 0;
  let high = Math.max(0, ...texts.map((t) => t.length));
  while (low < high) {
    const cap = Math.ceil((low + high) / 2);
    if (total(cap) <= budget) low = cap;
    else high = cap - 1;
  }
  return low;
}

/**
 * The bodies clipped so that their JSON takes at most `budget` bytes (as they are when they fit).
 * The common length is found on estimated sizes, then checked on the real JSON and lowered until
 * it fits.
 */
export function boundBodies(bodies: Record<string, Block[]>, budget: number): BoundResult {
  const full = jsonBytes(bodies);
  if (full <= budget) return { bodies, omitted: { blocks: 0, bytes: 0 } };
  const texts = payloads(bodies);
  const fixed = full - texts.reduce((n, t) => n + t.length * t.ratio, 0);
  let target = budget;
  for (let attempt = 0; attempt < 8; attempt++) {
    const result = clipAll(bodies, longestFit(texts, fixed, target));
    const size = jsonBytes(result.bodies);
    if (size <= budget || target <= 0) return { bodies: result.bodies, omitted: { blocks: result.omitted.blocks, bytes: full - size } };
    target -= size - budget + 64;
  }
  const result = clipAll(bodies, 0);
  return { bodies: result.bodies, omitted: { blocks: result.omitted.blocks, bytes: full - jsonBytes(result.bodies) } };
}
