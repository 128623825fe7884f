/**
 * Text from sessions, files and models printed to a terminal: control sequences in it would
 * drive the terminal (OSC 52 writes the clipboard, OSC 0 sets the title, OSC 8 makes links, a
 * carriage return or backspaces overwrite what was printed, `ESC[8m` hides everything after it),
 * and bidirectional overrides would show it in another order than it is (`\u202e` turns
 * "exe.txt" around). Every control character but the newline and the tab becomes "?", escape
 * sequences with it, and so do the overrides and isolates.
 */
/** The bidirectional overrides and isolates, as a range of a character class (oneLine masks them too). */
export const BIDI_OVERRIDES = "\u202a-\u202e\u2066-\u2069";
const CONTROLS = new RegExp(`[\u0000-\u0008\u000b-\u001f\u007f-\u009f${BIDI_OVERRIDES}]`, "g");

/**
 * The color sequences bonsai's own output is drawn with (util/colors.ts, picocolors): bold, dim,
 * italic, underline, inverse and strikethrough with their closes, and the six foreground colors
 * it uses with theirs. Nothing that hides text (8), blinks, or paints a background or black or
 * white text, which could make text vanish or pass for bonsai's.
 */
const OWN_COLORS = /\u001b\[(?:[1-479]|2[2-47-9]|3[1-69])m/g;

/** A whole color sequence (SGR): common in tool output (a test runner's colors), and dropped rather than shown as "?[32m". */
const ANY_COLOR = /\u001b\[[0-9;]*m/g;

/**
 * Text from a session, a file or a model, before any color of bonsai's is added: its color
 * sequences dropped (none can hide text or pass for bonsai's then), every other control masked.
 */
export function untrusted(text: string): string {
  return text.replace(ANY_COLOR, "").replace(CONTROLS, "?");
}

/**
 * Output composed by bonsai, its colors around text from sessions: with `ownColors` (colors are
 * on), the sequences bonsai draws with are kept; any other color sequence is dropped and any other
 * control masked, and with colors off every color sequence is dropped, since none can be bonsai's.
 */
export function terminalSafe(text: string, ownColors = true): string {
  if (!ownColors) return untrusted(text);
  let out = "";
  let from = 0;
  for (const match of text.matchAll(OWN_COLORS)) {
    out += untrusted(text.slice(from, match.index)) + match[0];
    from = match.index + match[0].length;
  }
  return out + untrusted(text.slice(from));
}
