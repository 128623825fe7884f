/** The sizes bounding works from (view/body-measure.ts): the lower bound from lengths never exceeds the real bytes. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Block } from "../../src/view/blocks.js";
import { BodySource, bodyLengths, jsonBytes } from "../../src/view/body-measure.js";
import { boundBodies, clipAll, measureBodies } from "../../src/view/bound.js";
import { seededRandom } from "../../src/util/seeded-random.js";

const PIECES = ["a", "word ", '"', "\\", "\n", "<", "é", "😀", "\u0001", "中"];

function randomBodies(seed: number): Record<string, Block[]> {
  const random = seededRandom(seed);
  const text = () => Array.from({ length: Math.floor(random() * 400) }, () => PIECES[Math.floor(random() * PIECES.length)]).join("");
  const block = (): Block => {
    const kinds: (() => Block)[] = [
      () => ({ kind: "text", text: text() }),
      () => ({ kind: "output", title: "bash", text: text(), isError: random() < 0.5 }),
      () => ({ kind: "toolCall", id: "c1", name: "edit", args: text() }),
      () => ({ kind: "image", mimeType: "image/png", data: "QUFB".repeat(Math.floor(random() * 100)) }),
      () => ({ kind: "pruned", notice: "[pruned]", prunedAt: 1, original: [{ kind: "output", title: "read", text: text(), isError: false }] }),
      () => ({ kind: "meta", text: text() }),
    ];
    return kinds[Math.floor(random() * kinds.length)]();
  };
  return Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`é${i}-${seed}`, Array.from({ length: 1 + Math.floor(random() * 3) }, block)]));
}

describe("body measure", () => {
  it("the floor at any length is at most the bytes of the bodies clipped to it", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const bodies = randomBodies(seed);
      const measure = measureBodies(bodies);
      for (const cap of [0, 1, 2, 7, 100, 1000, Number.POSITIVE_INFINITY]) {
        const real = jsonBytes(Number.isFinite(cap) ? clipAll(bodies, cap).bodies : bodies);
        assert.ok(measure.floor(cap) <= real, `seed ${seed}, cap ${cap}: ${measure.floor(cap)} <= ${real}`);
      }
      assert.equal(measure.full, jsonBytes(bodies));
    }
  });

  it("counts an image whole when nothing is clipped, and nothing when it would be left out", () => {
    const bodies: Record<string, Block[]> = { a: [{ kind: "image", mimeType: "image/png", data: "QUFB".repeat(250_000) }], b: [{ kind: "text", text: "hi" }] };
    const measure = measureBodies(bodies);
    assert.ok(measure.floor(Number.POSITIVE_INFINITY) >= 1_000_000, "the data of an image that is kept");
    assert.ok(measure.floor(100) < 200, "an image that does not fit becomes a note");
  });

  it("estimates the bytes left out with large images among the bodies it measured, or among those it did not", () => {
    const image = (): Block => ({ kind: "image", mimeType: "image/png", data: "QUFB".repeat(50_000) });
    for (const imagesAt of ["newest", "oldest"]) {
      const ids = Array.from({ length: 2000 }, (_, i) => `e${i}`);
      const withImage = (i: number) => (imagesAt === "newest" ? i >= 1995 : i < 5);
      const bodies: Record<string, Block[]> = Object.fromEntries(ids.map((id, i) => [id, withImage(i) ? [image()] : [{ kind: "text", text: `${i} `.repeat(700) } as Block]]));
      const order = [...ids].reverse();
      const result = boundBodies(bodies, 150_000, measureBodies(bodies), order);
      assert.equal(result.omitted.estimated, true);
      const exact = jsonBytes(bodies) - jsonBytes(result.bodies);
      assert.ok(Math.abs(result.omitted.bytes - exact) <= exact * 0.1, `images ${imagesAt}: about ${result.omitted.bytes}, in fact ${exact}`);
    }
  });

  it("makes only the bodies it keeps when the lengths of the others are known, and bounds them as if all were made", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `e${i}`);
    const bodies: Record<string, Block[]> = Object.fromEntries(ids.map((id, i) => [id, [{ kind: "text", text: `${i} `.repeat(700) } as Block]]));
    const made: string[] = [];
    const lazy = new BodySource(
      ids,
      (id) => {
        made.push(id);
        return bodies[id];
      },
      (id) => bodyLengths(id, bodies[id]),
    );
    const order = [...ids].reverse();
    const result = boundBodies(lazy, 150_000, measureBodies(lazy), order);
    const kept = Object.keys(result.bodies);
    assert.ok(kept.length > 10 && kept.length < 200, `${kept.length} kept`);
    assert.ok(made.length <= kept.length + 1, `${made.length} bodies made for ${kept.length} kept`);
    assert.deepEqual(result, boundBodies(bodies, 150_000, measureBodies(bodies), order), "the same bound as from every body");
  });

  it("estimates the bytes of bodies it did not measure from those it did, and is exact once all are", () => {
    const bodies = randomBodies(7);
    const measure = measureBodies(bodies);
    for (const id of Object.keys(bodies).slice(0, 10)) measure.entry(id);
    const rough = measure.approximate();
    assert.equal(rough.estimated, true);
    assert.ok(Math.abs(rough.bytes - jsonBytes(bodies)) < jsonBytes(bodies) * 0.3, `${rough.bytes} is about ${jsonBytes(bodies)}`);
    measure.all();
    assert.deepEqual(measure.approximate(), { bytes: jsonBytes(bodies), estimated: false });
  });
});
