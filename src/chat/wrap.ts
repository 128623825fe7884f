/**
 * Lines that the chat wraps itself, so a continuation stays under its column: pi-tui's Text
 * wraps at spaces and starts the rest at column 1, and breaks a word longer than the line
 * (a session file's path) wherever the width ends, inside a name.
 */

/** Where the last of `marks` is in `text[0, width)`, or -1. */
const lastOf = (text: string, marks: string, width: number) => Math.max(...[...marks].map((m) => text.lastIndexOf(m, width - 1)));

/** Pieces of a word no wider than `width`: after a `/` where one fits, else after `_`, `-` or `.`, else hard. */
function pieces(word: string, width: number): string[] {
  const out: string[] = [];
  let rest = word;
  while (rest.length > width) {
    const slash = rest.lastIndexOf("/", width - 1);
    const mark = slash > 0 ? slash : lastOf(rest, "_-.", width);
    const cut = mark > 0 ? mark + 1 : width;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) out.push(rest);
  return out;
}

/**
 * `head` then `text` wrapped to `width` columns, every line after the first indented by as many
 * spaces as `head` is wide; a word longer than the room is broken after a `/` (paths).
 * Without a width, one line.
 */
export function wrapHanging(head: string, text: string, width?: number): string[] {
  if (width === undefined || head.length + text.length <= width) return [`${head}${text}`];
  const room = Math.max(8, width - head.length);
  const indent = " ".repeat(head.length);
  const lines: string[] = [];
  let line = "";
  const place = (piece: string, glued: boolean) => {
    const joined = line === "" ? piece : glued ? `${line}${piece}` : `${line} ${piece}`;
    if (joined.length <= room || line === "") line = joined;
    else {
      lines.push(line);
      line = piece;
    }
  };
  for (const word of text.split(" ")) {
    // the pieces of a long path follow each other without a space
    pieces(word, room).forEach((piece, i) => {
      place(piece, i > 0);
    });
  }
  if (line) lines.push(line);
  return lines.map((l, i) => (i === 0 ? `${head}${l}` : `${indent}${l}`));
}
