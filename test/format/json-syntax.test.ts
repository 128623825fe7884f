/**
 * isWellFormedJson must say yes exactly when JSON.parse accepts the same bytes: the loader trusts
 * it to let a line through unparsed. Checked against JSON.parse on hand-picked edge cases and on
 * thousands of random documents and random damage to them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readMessagePrefix } from "../../src/storage/bodies.js";
import { finishesJsonObjects, isWellFormedJson } from "../../src/format/json-syntax.js";
import { seededRandom } from "../../src/util/seeded-random.js";

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function agrees(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  assert.equal(isWellFormedJson(bytes), parses(text), `disagrees with JSON.parse on ${JSON.stringify(text)}`);
}

const PIECES = ["a", "é", "\u2028", "🌳", '"', "\\", "\n", "\t", "\u0001", "\u001f", " ", "{", "}", "[", "]", ",", ":", "0", "-", "e", "\\u00e9"];

function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 5 : 7));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2: {
      const forms = [0, -0, 1, -12, 3.25, 1e21, -4.5e-7, 123456789012, Number.MAX_SAFE_INTEGER, 5e-324];
      return forms[Math.floor(next() * forms.length)];
    }
    case 3:
    case 4: {
      let text = "";
      const n = Math.floor(next() * 8);
      for (let k = 0; k < n; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      return text;
    }
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      const n = Math.floor(next() * 4);
      for (let k = 0; k < n; k++) out[String(randomValue(next, 9))] = randomValue(next, depth + 1);
      return out;
    }
  }
}

/** Bytes damage is made of: JSON punctuation, digits, letters of the literals, escapes, controls. */
const NOISE = ' \t\r\n{}[],:"\\/-+.0123456789eEtrufalsn\u0000\u0007xAz';

function damage(text: string, next: () => number): string {
  const at = Math.floor(next() * (text.length + 1));
  const char = NOISE[Math.floor(next() * NOISE.length)];
  switch (Math.floor(next() * 4)) {
    case 0:
      return text.slice(0, at) + char + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + char + text.slice(at + 1);
    default:
      return text.slice(0, at); // torn
  }
}

describe("isWellFormedJson", () => {
  it("agrees with JSON.parse on edge cases of the grammar", () => {
    const cases = [
      "{}", "[]", " { } ", '""', "0", "-0", "01", "-", "1.", ".5", "1e", "1e+", "1E-2", "2.5e10", "-0.0",
      "true", "tru", "truex", "null", "nul", "false", "[1,]", "[,1]", "[1 2]", '{"a"}', '{"a":}', '{"a":1,}',
      '{,"a":1}', '{"a" : 1 , "b" : [ ] }', '{a:1}', "{'a':1}", '"\\u12"', '"\\u12G4"', '"\\uABCD"', '"\\x41"',
      '"\\/"', '"a\tb"', '"a\u0000b"', '"\u007f"', '"unterminated', '"\\"', '"\\\\"', "[[[[]]]]", "[[[[]]]",
      "[]]", "{}{}", "[] []", "", " ", "\t\r\n[\t\r\n]\t\r\n", "[1]\u000b", "\u00a0[]", '{"a":1}}', "[0x10]",
      "[Infinity]", "[NaN]", "[+1]", '{"":""}', '["\u2028"]',
    ];
    for (const text of cases) agrees(text);
  });

  it("agrees with JSON.parse on random documents and random damage to them", () => {
    const next = seededRandom(20261130);
    for (let round = 0; round < 4000; round++) {
      const text = JSON.stringify(randomValue(next, 0));
      agrees(text);
      let broken = text;
      for (let k = 0; k < 1 + Math.floor(next() * 3); k++) broken = damage(broken, next);
      agrees(broken);
    }
  });

  it("checks a range of a larger buffer without reading outside it", () => {
    const bytes = Buffer.from('xx{"a":[1,2]}yy{"b":');
    assert.equal(isWellFormedJson(bytes, 2, 13), true);
    assert.equal(isWellFormedJson(bytes, 2, 12), false, "torn before the closing brace");
    assert.equal(isWellFormedJson(bytes, 15, bytes.length), false);
    assert.equal(isWellFormedJson(Buffer.from('"ab"'), 0, 3), false, "a string cut at the range end");
  });

  it("handles nesting far deeper than the call stack allows", () => {
    const depth = 200_000;
    assert.equal(isWellFormedJson(Buffer.from("[".repeat(depth) + "]".repeat(depth))), true);
    assert.equal(isWellFormedJson(Buffer.from("[".repeat(depth) + "]".repeat(depth - 1))), false);
    assert.equal(isWellFormedJson(Buffer.from(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)), true);
  });

  it("finishing a message line after its prefix agrees with checking the whole line", () => {
    const next = seededRandom(7);
    let compared = 0;
    for (let round = 0; round < 3000; round++) {
      const entry = {
        type: "message",
        id: `m${round}`,
        parentId: round % 5 === 0 ? null : `m${round - 1}`,
        timestamp: "2026-01-01T00:00:00.000Z",
        message: { role: ["user", "assistant", "toolResult"][round % 3], content: randomValue(next, 1), extra: randomValue(next, 2) },
      };
      let text = JSON.stringify(entry);
      if (round % 2 === 1) for (let k = 0; k < 1 + Math.floor(next() * 2); k++) text = damage(text, next);
      const bytes = Buffer.from(text, "utf8");
      const prefix = readMessagePrefix(bytes);
      if (!prefix) continue; // damage inside the prefix: the loader parses such a line in full
      compared++;
      assert.equal(finishesJsonObjects(bytes, prefix.bodyAt, bytes.length, 2), parses(text), `disagrees on ${JSON.stringify(text)}`);
    }
    // every intact line (half of them) and a good share of the damaged ones
    assert.ok(compared > 1700, `only ${compared} lines kept their prefix`);
  });
});
