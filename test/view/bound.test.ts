import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Block } from "../../src/view/blocks.js";
import { boundBodies, jsonBytes, measureBodies, READABLE } from "../../src/view/bound.js";

const text = (n: number, c = "a"): Block => ({ kind: "text", text: c.repeat(n) });

describe("boundBodies", () => {
  it("returns bodies that fit as they are", () => {
    const bodies = { a: [text(10)], b: [text(20)] };
    const result = boundBodies(bodies, 1000);
    assert.equal(result.bodies, bodies);
    assert.deepEqual(result.omitted, { blocks: 0, bytes: 0 });
  });

  it("clips the long texts to one length that fits, keeps the short ones whole, and says what each lost", () => {
    const bodies: Record<string, Block[]> = { short: [text(50)], long1: [text(10_000, "b")], long2: [{ kind: "output", title: "bash", text: "c".repeat(20_000), isError: false }] };
    const budget = 8_000;
    const result = boundBodies(bodies, budget);
    assert.ok(jsonBytes(result.bodies) <= budget, `${jsonBytes(result.bodies)} <= ${budget}`);
    assert.deepEqual(result.bodies.short, bodies.short);
    const [l1] = result.bodies.long1;
    const [l2] = result.bodies.long2;
    assert.ok(l1.kind === "text" && l2.kind === "output");
    assert.equal(l1.text.length, l2.text.length, "one common length");
    assert.equal(l1.clipped, 10_000 - l1.text.length);
    assert.equal(l2.clipped, 20_000 - l2.text.length);
    assert.ok(l1.text.length > 1000, "as long as the budget allows");
    assert.equal(result.omitted.blocks, 2);
    assert.equal(result.omitted.bytes, jsonBytes(bodies) - jsonBytes(result.bodies));
  });

  it("leaves out an image that does not fit, with a note, and clips archived originals too", () => {
    const bodies: Record<string, Block[]> = {
      img: [{ kind: "image", mimeType: "image/png", data: "A".repeat(40_000) }],
      pruned: [{ kind: "pruned", notice: "[pruned]", prunedAt: 1, original: [{ kind: "output", title: "read", text: "x".repeat(30_000), isError: false }] }],
    };
    const result = boundBodies(bodies, 5_000);
    assert.ok(jsonBytes(result.bodies) <= 5_000);
    const [img] = result.bodies.img;
    assert.equal(img.kind, "meta");
    assert.match(img.kind === "meta" ? img.text : "", /image \(image\/png, \d+ KB\) left out/);
    const [pruned] = result.bodies.pruned;
    assert.ok(pruned.kind === "pruned" && pruned.original?.[0].kind === "output" && pruned.original[0].clipped! > 0);
  });

  it("counts JSON escapes and multi-byte characters, and never splits a surrogate pair", () => {
    const bodies: Record<string, Block[]> = { a: [{ kind: "text", text: '"\n'.repeat(5000) }], b: [{ kind: "text", text: "😀".repeat(5000) }] };
    const result = boundBodies(bodies, 6_000);
    assert.ok(jsonBytes(result.bodies) <= 6_000, `${jsonBytes(result.bodies)}`);
    const [b] = result.bodies.b;
    assert.ok(b.kind === "text" && !/[\ud800-\udbff]$/.test(b.text));
  });

  it("with an order, keeps the first bodies readable when one common length would be too short, and counts the rest left out", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `e${i}`);
    const bodies: Record<string, Block[]> = Object.fromEntries(ids.map((id) => [id, [text(3000), { kind: "meta", text: "model" } as Block]]));
    const order = [...ids].reverse();
    const budget = 20_000;
    const measure = measureBodies(bodies);
    const result = boundBodies(bodies, budget, measure, order);
    assert.ok(jsonBytes(result.bodies) <= budget, `${jsonBytes(result.bodies)} <= ${budget}`);
    const kept = Object.keys(result.bodies);
    assert.ok(kept.length >= 10 && kept.length < 200, `${kept.length} kept`);
    assert.deepEqual(kept, order.slice(0, kept.length), "the first of the order");
    for (const id of kept) assert.equal((result.bodies[id][0] as { text: string }).text.length, READABLE);
    assert.equal(result.omitted.blocks, kept.length + (200 - kept.length) * 2, "clipped blocks, and every block of a body left out");
    // the lengths alone showed no common length could fit: only the bodies kept were measured, the bytes left out are estimated
    assert.equal(result.omitted.estimated, true);
    const exact = jsonBytes(bodies) - jsonBytes(result.bodies);
    assert.ok(Math.abs(result.omitted.bytes - exact) <= exact * 0.02, `${result.omitted.bytes} is about ${exact}`);
    // without an order the same budget clips every body to one (unreadable) length, measuring all of them
    const common = boundBodies(bodies, budget, measure);
    assert.equal(common.omitted.estimated, undefined);
    assert.equal(common.omitted.bytes, jsonBytes(bodies) - jsonBytes(common.bodies));
    assert.equal(Object.keys(common.bodies).length, 200);
    assert.ok((common.bodies.e0[0] as { text: string }).text.length < 100);
  });
});
