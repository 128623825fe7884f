/**
 * Text from sessions, files and models printed to a terminal: control sequences in it would
 * drive the terminal (OSC 52 writes the clipboard, OSC 0 sets the title, OSC 8 makes links, a
 * carriage return or backspaces overwrite what was printed). Every control character but the
 * newline and the tab becomes "?", and escape sequences with it, except the color sequences
 * (SGR: ESC [ digits and semicolons m) that bonsai prints itself, which can do no more than color.
 */
const CONTROLS = /\u001b\[[0-9;]*m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, (match) => (match.length > 1 ? match : "?"));
}
