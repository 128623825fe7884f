/**
 * Entry ids: 8 lowercase hex characters drawn from a pool of random bytes, re-drawn on collision,
 * a full UUID when collisions will not stop; session ids sort by creation time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { derivedEntryId, generateEntryId, generateSessionId } from "../../src/format/ids.js";

describe("generateEntryId", () => {
  it("gives distinct 8-character hex ids across many pool refills", () => {
    const taken = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = generateEntryId(taken);
      assert.match(id, /^[0-9a-f]{8}$/);
      assert.equal(taken.has(id), false);
      taken.add(id);
    }
    // 5,000 ids use 20,000 pool bytes: five refills of the 4 KB pool, and no repeats across them
    assert.equal(taken.size, 5000);
  });

  it("draws again while an id is taken, and falls back to a UUID after 100 tries", () => {
    let asked = 0;
    const id = generateEntryId({ has: () => ++asked <= 3 });
    assert.equal(asked, 4);
    assert.match(id, /^[0-9a-f]{8}$/);
    assert.match(generateEntryId({ has: () => true }), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("generateSessionId", () => {
  it("sorts by creation time", () => {
    const earlier = generateSessionId(1_700_000_000_000);
    const later = generateSessionId(1_700_000_000_001);
    assert.ok(earlier < later);
    assert.match(earlier, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("derivedEntryId (issue 19, ids of id-less files)", () => {
  it("is the same for the same material and position, and differs when either changes", () => {
    const none = new Set<string>();
    const id = derivedEntryId("header\nline", 3, none);
    assert.match(id, /^[0-9a-f]{8}$/);
    assert.equal(derivedEntryId("header\nline", 3, none), id);
    assert.notEqual(derivedEntryId("header\nline", 4, none), id);
    assert.notEqual(derivedEntryId("header\nother", 3, none), id);
  });

  it("derives again, deterministically, when the id is taken: a collision is detected, never kept", () => {
    const first = derivedEntryId("m", 1, new Set());
    const again = derivedEntryId("m", 1, new Set([first]));
    assert.notEqual(again, first);
    assert.match(again, /^[0-9a-f]{8}$/);
    assert.equal(derivedEntryId("m", 1, new Set([first])), again);
  });
});
