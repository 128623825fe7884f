/**
 * The digests of a session's entries as a cache keeps them (storage/derived-cache.ts): one array
 * per field instead of an object per entry, which a 50,000-entry session reads back in half the
 * time, with a fraction of the objects. Anything of the wrong shape reads as no digest. Pure.
 */
import type { ValuesCodec } from "../storage/derived-cache.js";
import type { EntryDigest, NodeFlags } from "./entry-digest.js";

interface Columns {
  ids: string[];
  timestamps: (string | null)[];
  kinds: string[];
  previews: string[];
  tokens: number[];
  /** the flags as bits (FLAG_BITS), and NO_MESSAGE */
  flags: number[];
  /** an assistant message's model, provider and reported usage; null for the others */
  models: (string | null)[];
  providers: (string | null)[];
  usage: (number | null)[];
  /** each body's block count (-1: its lengths are not kept) and base; how many text and image lengths it has in `texts` and `images`, in order */
  blocks: number[];
  bases: number[];
  textCounts: number[];
  imageCounts: number[];
  texts: number[];
  images: number[];
}

const FLAG_BITS: [keyof NodeFlags, number][] = [
  ["user", 1],
  ["tool", 2],
  ["error", 4],
  ["pruned", 8],
  ["thinking", 16],
];
const NO_MESSAGE = 32;

/** One flags object per combination, shared by the digests read back (rows never change them). */
const SHARED_FLAGS: NodeFlags[] = Array.from({ length: 32 }, (_, bits) => {
  const flags: NodeFlags = {};
  for (const [flag, bit] of FLAG_BITS) if (bits & bit) flags[flag] = true;
  return Object.freeze(flags);
});

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const arrayOf = (value: unknown, length: number, each: (item: unknown) => boolean) => Array.isArray(value) && value.length === length && value.every(each);
const isString = (value: unknown) => typeof value === "string";
const isStringOrNull = (value: unknown) => value === null || typeof value === "string";

function encode(digests: ReadonlyMap<string, EntryDigest>): Columns {
  const c: Columns = { ids: [], timestamps: [], kinds: [], previews: [], tokens: [], flags: [], models: [], providers: [], usage: [], blocks: [], bases: [], textCounts: [], imageCounts: [], texts: [], images: [] };
  for (const [id, d] of digests) {
    let bits = d.noMessage ? NO_MESSAGE : 0;
    for (const [flag, bit] of FLAG_BITS) if (d.flags[flag]) bits |= bit;
    c.ids.push(id);
    c.timestamps.push(d.timestamp ?? null);
    c.kinds.push(d.kind);
    c.previews.push(d.preview);
    c.tokens.push(d.tokens);
    c.flags.push(bits);
    c.models.push(d.model ?? null);
    c.providers.push(d.provider ?? null);
    c.usage.push(d.usage ?? null);
    const lengths = d.lengths;
    c.blocks.push(lengths ? lengths.blocks : -1);
    c.bases.push(lengths ? lengths.base : 0);
    c.textCounts.push(lengths ? lengths.texts.length : 0);
    c.imageCounts.push(lengths ? lengths.images.length : 0);
    if (lengths) {
      for (let i = 0; i < lengths.texts.length; i++) c.texts.push(lengths.texts[i]);
      for (let i = 0; i < lengths.images.length; i++) c.images.push(lengths.images[i]);
    }
  }
  return c;
}

/** Whether `value` has every column, each of the right length and kind (lengths are checked as they are read). */
function isColumns(value: unknown): value is Columns {
  const c = value as Columns | null;
  if (typeof c !== "object" || c === null || !Array.isArray(c.ids)) return false;
  const n = c.ids.length;
  return (
    arrayOf(c.ids, n, isString) &&
    arrayOf(c.timestamps, n, isStringOrNull) &&
    arrayOf(c.kinds, n, isString) &&
    arrayOf(c.previews, n, isString) &&
    arrayOf(c.tokens, n, isCount) &&
    arrayOf(c.flags, n, (f) => isCount(f) && (f as number) < 64) &&
    arrayOf(c.models, n, isStringOrNull) &&
    arrayOf(c.providers, n, isStringOrNull) &&
    arrayOf(c.usage, n, (u) => u === null || (typeof u === "number" && Number.isFinite(u) && u > 0)) &&
    arrayOf(c.blocks, n, (b) => b === -1 || isCount(b)) &&
    arrayOf(c.bases, n, isCount) &&
    arrayOf(c.textCounts, n, isCount) &&
    arrayOf(c.imageCounts, n, isCount) &&
    Array.isArray(c.texts) &&
    c.texts.every(isCount) &&
    Array.isArray(c.images) &&
    c.images.every(isCount)
  );
}

function decode(stored: unknown): Map<string, EntryDigest> {
  const digests = new Map<string, EntryDigest>();
  if (!isColumns(stored)) return digests;
  const c = stored;
  let text = 0;
  let image = 0;
  for (let i = 0; i < c.ids.length; i++) {
    const bits = c.flags[i];
    const digest: EntryDigest = { kind: c.kinds[i], preview: c.previews[i], tokens: c.tokens[i], flags: SHARED_FLAGS[bits & 31] };
    if (c.timestamps[i] !== null) digest.timestamp = c.timestamps[i]!;
    if (bits & NO_MESSAGE) digest.noMessage = true;
    if (c.models[i] !== null) digest.model = c.models[i]!;
    if (c.providers[i] !== null) digest.provider = c.providers[i]!;
    if (c.usage[i] !== null) digest.usage = c.usage[i]!;
    const texts = c.texts.slice(text, text + c.textCounts[i]);
    const images = c.images.slice(image, image + c.imageCounts[i]);
    text += c.textCounts[i];
    image += c.imageCounts[i];
    if (c.blocks[i] >= 0) digest.lengths = { blocks: c.blocks[i], base: c.bases[i], texts, images };
    digests.set(c.ids[i], digest);
  }
  // the counts must account for every length: otherwise the lengths were not written by encode
  return text === c.texts.length && image === c.images.length ? digests : new Map();
}

export const digestColumns: ValuesCodec<EntryDigest> = { decode, encode };
