import { randomBytes, randomFillSync, randomUUID } from "node:crypto";

/**
 * Random bytes drawn 4 KB at a time: a crypto call per id cost about 2 µs, a fifth of an append
 * and most of migrating a v1 file (which gives every entry an id); a slice of the pool costs
 * almost nothing.
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

/** Session ids are UUIDv7-like: time-ordered, so file names sort by creation. */
export function generateSessionId(now: number = Date.now()): string {
  const hex = now.toString(16).padStart(12, "0").slice(-12);
  const rand = randomBytes(10).toString("hex");
  const variant = ((Number.parseInt(rand[3], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${rand.slice(0, 3)}-${variant}${rand.slice(4, 7)}-${rand.slice(7, 19)}`;
}
