/**
 * The sizes bounding an export needs (bound.ts), each worked out when first asked for: a bound
 * that keeps only the newest bodies of a 50,000-entry session measures those bodies, not every
 * one, and a lower bound from lengths alone tells when no common length can fit. Pure.
 */
import type { Block } from "./blocks.js";

/** UTF-8 bytes of a value as JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

/** The text a block carries that may be clipped, or undefined when it has none. */
export function payload(block: Block): string | undefined {
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

export interface Measured {
  length: number;
  /** bytes per character in the page */
  ratio: number;
  /** bytes as plain JSON, without quotes */
  json: number;
}

/** One body: its blocks, the bytes of its member (`"id":[…],`) but the texts, and its texts. */
export interface EntryMeasure {
  blocks: number;
  fixed: number;
  texts: Measured[];
  /** of `texts`, the JSON bytes of images' data */
  images: number;
}

/** A text this long or shorter is measured whole; a longer one from samples of it. */
const MEASURED_WHOLE = 8 * 1024;
const SAMPLE = 4096;

function count(text: string, char: string): number {
  let n = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) n++;
  return n;
}

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

/** Each block of `blocks` and of the originals of pruned ones, depth first. */
function* everyBlock(blocks: readonly Block[]): Generator<Block> {
  for (const block of blocks) {
    yield block;
    if (block.kind === "pruned") yield* everyBlock(block.original ?? []);
  }
}

/** `blocks` with every text emptied: what is left of them when their texts are measured apart. */
export type EmptyTexts = (blocks: readonly Block[]) => Block[];

function measureEntry(id: string, list: readonly Block[], emptied: EmptyTexts): EntryMeasure {
  const texts: Measured[] = [];
  let images = 0;
  for (const block of everyBlock(list)) {
    const text = payload(block);
    if (!text) continue;
    const measured = measureText(text);
    texts.push(measured);
    if (block.kind === "image") images += measured.json;
  }
  // the rest is measured with every text emptied (each leaves its two quotes), with its key and comma
  return { blocks: list.length, fixed: jsonBytes(id) + 2 + jsonBytes(emptied(list)), texts, images };
}

/** Bytes of `{"kind":""}` and the comma after it: the least a block takes besides its kind and text. */
const BLOCK_FLOOR = 12;

/**
 * The least the member of `id` takes besides its texts (its quoted id, `:[`, `]` and a comma, and
 * each block's `{"kind":""}`, kind and comma); its texts' lengths and its images' are pushed.
 */
function memberLengths(id: string, list: readonly Block[], texts: number[], images: number[]): number {
  let base = id.length + 5;
  for (const block of everyBlock(list)) {
    base += BLOCK_FLOOR + block.kind.length;
    const text = payload(block);
    if (text) (block.kind === "image" ? images : texts).push(text.length);
  }
  return base;
}

/** What floor() reads of one body: its blocks, the least its member takes besides its texts (memberLengths), its texts' lengths and its images'. */
export interface BodyLengths {
  blocks: number;
  base: number;
  texts: number[];
  images: number[];
}

export function bodyLengths(id: string, list: readonly Block[]): BodyLengths {
  const texts: number[] = [];
  const images: number[] = [];
  const base = memberLengths(id, list, texts, images);
  return { blocks: list.length, base, texts, images };
}

/**
 * The bodies of an export by entry id, each made when bounding first asks for it (`make`: a
 * session's body read from its file and turned into blocks), and the lengths of those not made
 * yet when they are known without them (`known`: an entry's digest). Made bodies are kept.
 */
export class BodySource {
  private readonly made = new Map<string, Block[]>();

  constructor(
    readonly ids: readonly string[],
    private readonly make: (id: string) => Block[] | undefined,
    private readonly known: (id: string) => BodyLengths | undefined = () => undefined,
  ) {}

  /** The bodies of a record, in its order. */
  static of(bodies: Record<string, Block[]>): BodySource {
    return new BodySource(Object.keys(bodies), (id) => bodies[id]);
  }

  blocks(id: string): Block[] | undefined {
    let list = this.made.get(id);
    if (!list) {
      list = this.make(id);
      if (list) this.made.set(id, list);
    }
    return list;
  }

  lengths(id: string): BodyLengths | undefined {
    if (!this.made.has(id)) {
      const known = this.known(id);
      if (known) return known;
    }
    const list = this.blocks(id);
    return list && bodyLengths(id, list);
  }

  /** The bodies of `ids` (default: every one) as a record, in that order. */
  pick(ids: readonly string[] = this.ids): Record<string, Block[]> {
    const out: Record<string, Block[]> = {};
    for (const id of ids) {
      const list = this.blocks(id);
      if (list) out[id] = list;
    }
    return out;
  }
}

export class BodyMeasure {
  private readonly measured = new Map<string, EntryMeasure>();
  private whole?: { texts: Measured[]; fixed: number; estimated: boolean };
  private exact?: number;
  private readonly floors = new Map<number, number>();
  private flat?: { base: number; texts: Float64Array; images: Float64Array };

  /** `emptied` is bound.ts's clipping to nothing, passed in so the two agree on what a text is */
  constructor(
    private readonly bodies: BodySource,
    private readonly emptied: EmptyTexts,
  ) {}

  ids(): readonly string[] {
    return this.bodies.ids;
  }

  /** How many blocks the body of `id` has (0 without one): counted, not measured. */
  blocks(id: string): number {
    return this.bodies.lengths(id)?.blocks ?? 0;
  }

  entry(id: string): EntryMeasure | undefined {
    let known = this.measured.get(id);
    const list = known ? undefined : this.bodies.blocks(id);
    if (!known && list) {
      known = measureEntry(id, list, this.emptied);
      this.measured.set(id, known);
    }
    return known;
  }

  /** Every text, the bytes of everything but the texts (`{` and `}` too), and whether a text was measured from samples. */
  all(): { texts: Measured[]; fixed: number; estimated: boolean } {
    if (this.whole) return this.whole;
    const ids = this.ids();
    const texts: Measured[] = [];
    // `{` and `}`, less the comma the last member does not have
    let fixed = ids.length > 0 ? 1 : 2;
    for (const id of ids) {
      const entry = this.entry(id)!;
      fixed += entry.fixed;
      for (const text of entry.texts) texts.push(text);
    }
    this.whole = { texts, fixed, estimated: texts.some((t) => t.length > MEASURED_WHOLE) };
    return this.whole;
  }

  /** The bodies' JSON bytes, exact: each body serialized once, none of them kept (as costly as measuring every body). */
  get full(): number {
    if (this.exact === undefined) {
      const ids = this.ids();
      this.exact = ids.length > 0 ? 1 : 2;
      for (const id of ids) this.exact += jsonBytes(id) + 2 + jsonBytes(this.bodies.blocks(id));
    }
    return this.exact;
  }

  /**
   * The bodies' JSON bytes as far as they were measured: the measured bodies' bytes; for the
   * others, their images' data (base64: a byte a character) and the lower bound of the rest
   * (`floor`) scaled by how far the measured bodies' rest exceeds its own. Exact (less sampled
   * long texts) when every body was measured, or when `full` was worked out.
   */
  approximate(): { bytes: number; estimated: boolean } {
    if (this.exact !== undefined) return { bytes: this.exact, estimated: false };
    if (this.whole) return { bytes: this.whole.texts.reduce((n, t) => n + t.json, this.whole.fixed), estimated: this.whole.estimated };
    let measured = 0;
    let measuredFloor = 0;
    let unmeasuredFloor = 1;
    let images = 0;
    for (const id of this.ids()) {
      const entry = this.measured.get(id);
      const floor = this.entryFloor(id);
      if (!entry) {
        unmeasuredFloor += floor.rest;
        images += floor.images;
        continue;
      }
      const bytes = entry.fixed + entry.texts.reduce((n, t) => n + t.json, 0);
      measured += bytes - entry.images;
      images += entry.images;
      measuredFloor += floor.rest;
    }
    const scale = measuredFloor > 0 ? measured / measuredFloor : 1;
    return { bytes: Math.round(measured + unmeasuredFloor * scale + images), estimated: true };
  }

  /**
   * A lower bound of the bodies' JSON bytes with every text clipped to `cap` characters, from
   * lengths alone: each block takes at least its kind and its text so clipped (one less where a
   * surrogate pair is not split); an image takes its data when it fits, and nothing when it does
   * not (it becomes a note).
   */
  floor(cap: number): number {
    let total = this.floors.get(cap);
    if (total !== undefined) return total;
    const { base, texts, images } = this.lengths();
    total = base;
    for (let i = 0; i < texts.length; i++) total += texts[i] > cap ? Math.max(0, cap - 1) : texts[i];
    for (let i = 0; i < images.length; i++) total += images[i] > cap ? 0 : images[i];
    this.floors.set(cap, total);
    return total;
  }

  /** What floor() adds up, read once: the least every member takes besides its texts, each text's length and each image's. */
  private lengths(): { base: number; texts: Float64Array; images: Float64Array } {
    if (this.flat) return this.flat;
    // `{` and `}`, less the last member's comma
    let base = 1;
    const texts: number[] = [];
    const images: number[] = [];
    for (const id of this.ids()) {
      const lengths = this.bodies.lengths(id);
      if (!lengths) continue;
      base += lengths.base;
      for (const length of lengths.texts) texts.push(length);
      for (const length of lengths.images) images.push(length);
    }
    this.flat = { base, texts: Float64Array.from(texts), images: Float64Array.from(images) };
    return this.flat;
  }

  /** floor() of one member with no clipping, its images apart. */
  private entryFloor(id: string): { rest: number; images: number } {
    const lengths = this.bodies.lengths(id);
    if (!lengths) return { rest: 0, images: 0 };
    return { rest: lengths.texts.reduce((n, t) => n + t, lengths.base), images: lengths.images.reduce((n, i) => n + i, 0) };
  }
}
