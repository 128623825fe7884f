/** formatCount writes numbers as toLocaleString("en-US") does, without loading ICU's locale data. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatCount } from "../../src/util/count.js";
import { seededRandom } from "../../src/util/seeded-random.js";

test("formatCount agrees with toLocaleString('en-US') on integers, fractions, negatives and edges", () => {
  const random = seededRandom(7);
  const numbers = [0, -0, 1, 999, 1000, 24_990, 1_234_567, -1234, 1234.5678, 0.5, 12.3, -0.4, 999_999.9999, 1e15, 100_000_000_000_001, 2 ** 53 + 2, 1e21, 1.0005, 2.0015, Number.NaN, Number.POSITIVE_INFINITY];
  for (let i = 0; i < 2000; i++) {
    const magnitude = 10 ** Math.floor(random() * 12);
    numbers.push(Math.floor(random() * magnitude), (random() - 0.5) * magnitude);
  }
  for (const n of numbers) assert.equal(formatCount(n), n.toLocaleString("en-US"), String(n));
});
