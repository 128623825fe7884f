/**
 * Text for the terminal with every run of more than `max` characters without whitespace broken
 * by a newline every `max` characters. pi-tui wraps such a run (a pasted blob, base64, minified
 * code) in time that grows faster than its length: a 24,000-character run took 250 ms to lay out
 * and a resumed chat with sixteen of them seven seconds. Display only; a surrogate pair is never
 * split. Pure.
 */
export const LONG_RUN = 512;

export function breakLongRuns(text: string, max = LONG_RUN): string {
  let out: string[] | undefined;
  let from = 0; // start of the text not yet copied to `out`
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // whitespace ends a run (space, tab, line breaks and the other Unicode spaces)
    if (code <= 32 || code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000) {
      run = 0;
      continue;
    }
    // the second half of a surrogate pair belongs to the character before it
    if (code >= 0xdc00 && code <= 0xdfff) continue;
    if (run === max) {
      out ??= [];
      out.push(text.slice(from, i), "\n");
      from = i;
      run = 0;
    }
    run++;
  }
  if (!out) return text;
  out.push(text.slice(from));
  return out.join("");
}
