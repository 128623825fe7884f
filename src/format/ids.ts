import { createHash, randomBytes, randomFillSync, randomUUID } from "node:crypto";

/**
 * Random bytes drawn 4 KB at a time: a crypto call per id cost about 2 µs, a fifth of an append;
 * a slice of the pool costs almost nothing. (A v1 file's entries get derived ids instead, below.)
 */
const pool = Buffer.allocUnsafe(4096);
let poolAt = pool.length;

function randomHex8(): string {
  if (poolAt + 4 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString("hex", poolAt, poolAt + 4);
  poolAt += 4;
  return hex;
}

/** Makes the next id draw fresh bytes: for tests that replace the random source. */
export function resetEntryIdPool(): void {
  poolAt = pool.length;
}

/** 8 lowercase hex characters, re-drawn while they collide; a full UUID after 100 collisions. */
export function generateEntryId(taken: { has(id: string): boolean }): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = randomHex8();
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * The id of an entry that a file does not store (v1 files have none): 8 hex characters derived
 * from `material` (the session's header) and the entry's position, so every read of the same file
 * gives the same ids and the ids one command prints work in the next one; migration writes these
 * same ids. An id already given out is never reused: the next attempt is mixed in, which is as
 * deterministic as the first try. The material is hashed once (sha256) and each id is a cheap mix
 * of that digest with the position: a v1 file derives one id per line on every open.
 */
export function derivedEntryId(material: string, position: number, taken: { has(id: string): boolean }): string {
  const seed = seedOf(material);
  for (let attempt = 0; ; attempt++) {
    let h = seed[0] ^ Math.imul(position + 1, 0x9e3779b1);
    h = mix32(h ^ seed[1]);
    h = mix32(h ^ Math.imul(attempt + 1, 0x85ebca6b) ^ seed[2]);
    const id = (h >>> 0).toString(16).padStart(8, "0");
    if (!taken.has(id)) return id;
  }
}

let seedMaterial: string | undefined;
let seedWords: Uint32Array = new Uint32Array(3);

/** The first three 32-bit words of sha256(material); the last material's words are kept. */
function seedOf(material: string): Uint32Array {
  if (material !== seedMaterial) {
    const digest = createHash("sha256").update(material).digest();
    seedWords = new Uint32Array([digest.readUInt32BE(0), digest.readUInt32BE(4), digest.readUInt32BE(8)]);
    seedMaterial = material;
  }
  return seedWords;
}

/** murmur3's finalizer: every input bit reaches every output bit. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Session ids are UUIDv7-like: time-ordered, so file names sort by creation. */
export function generateSessionId(now: number = Date.now()): string {
  const hex = now.toString(16).padStart(12, "0").slice(-12);
  const rand = randomBytes(10).toString("hex");
  const variant = ((Number.parseInt(rand[3], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${rand.slice(0, 3)}-${variant}${rand.slice(4, 7)}-${rand.slice(7, 19)}`;
}
