/** Splitting session bytes into lines (src/format/lines.ts): a buffer, and data read in chunks. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forEachBufferLine, forEachChunkLine, type RawLine } from "../../src/format/lines.js";

interface Seen {
  lineNo: number;
  offset: number;
  text: string;
  terminated: boolean;
}

const record = (seen: Seen[]) => (line: RawLine) =>
  seen.push({ lineNo: line.lineNo, offset: line.offset, text: line.bytes.toString("utf8"), terminated: line.terminated });

/** A reader that hands out `data` at most `step` bytes per call, as a slow pipe or file would. */
function reader(data: Buffer, step: number): (buffer: Buffer) => number {
  let position = 0;
  return (buffer) => {
    const n = Math.min(step, buffer.length, data.length - position);
    data.copy(buffer, 0, position, position + n);
    position += n;
    return n;
  };
}

describe("line splitting", () => {
  const text = 'first\r\n{"a":1}\n\nlast without newline';
  const expected: Seen[] = [
    { lineNo: 1, offset: 0, text: "first", terminated: true },
    { lineNo: 2, offset: 7, text: '{"a":1}', terminated: true },
    { lineNo: 3, offset: 15, text: "", terminated: true },
    { lineNo: 4, offset: 16, text: "last without newline", terminated: false },
  ];

  it("reports every line with its number, offset and whether a newline ended it", () => {
    const seen: Seen[] = [];
    forEachBufferLine(Buffer.from(text), record(seen));
    assert.deepEqual(seen, expected);
  });

  it("gives the same lines whatever the size of the chunks the data arrives in", () => {
    for (const step of [1, 2, 3, 5, 8, 64]) {
      const seen: Seen[] = [];
      const { size } = forEachChunkLine(reader(Buffer.from(text), step), record(seen));
      assert.deepEqual(seen, expected, `chunks of ${step} bytes`);
      assert.equal(size, Buffer.byteLength(text));
    }
  });

  it("copies a line that spans many chunks once, not once per chunk (linear in its length)", () => {
    const long = Buffer.alloc(4 << 20, "x");
    const data = Buffer.concat([long, Buffer.from("\nnext\n")]);
    const concat = Buffer.concat;
    let copied = 0;
    Buffer.concat = ((list: readonly Uint8Array[], totalLength?: number) => {
      const joined = concat(list, totalLength);
      copied += joined.length;
      return joined;
    }) as typeof Buffer.concat;
    const lengths: number[] = [];
    try {
      forEachChunkLine(reader(data, 4096), (line) => lengths.push(line.end - line.start));
    } finally {
      Buffer.concat = concat;
    }
    assert.deepEqual(lengths, [long.length, 4]);
    // joining once copies the line once; joining per chunk would copy ~1024 times as much
    assert.ok(copied <= 2 * long.length, `copied ${copied} bytes for a ${long.length}-byte line`);
  });
});
