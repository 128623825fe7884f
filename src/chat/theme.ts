/**
 * Colors of `bonsai chat`: one function per display style, and the pi-tui component themes built
 * from them. Plain terminals (NO_COLOR) get the same text without escapes.
 */
import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@mariozechner/pi-tui";
import { colors } from "../util/colors.js";
import type { BlockStyle } from "./transcript.js";

const c = colors();

export const style: Record<BlockStyle, (text: string) => string> = {
  user: (t) => c.bold(t),
  synthetic: (t) => c.dim(c.italic(t)),
  assistant: (t) => t,
  thinking: (t) => c.dim(c.italic(t)),
  toolCall: (t) => c.cyan(t),
  toolResult: (t) => c.dim(t),
  toolError: (t) => c.red(t),
  summary: (t) => c.magenta(t),
  notice: (t) => c.dim(t),
  success: (t) => c.green(t),
  warning: (t) => c.yellow(t),
  error: (t) => c.red(t),
};

export const ui = {
  accent: (t: string) => c.cyan(t),
  dim: (t: string) => c.dim(t),
  bold: (t: string) => c.bold(t),
  leaf: (t: string) => c.yellow(c.bold(t)),
  label: (t: string) => c.cyan(c.bold(t)),
  compaction: (t: string) => c.magenta(t),
  branch: (t: string) => c.blue(t),
};

export const selectListTheme: SelectListTheme = {
  selectedPrefix: (t) => c.cyan(t),
  selectedText: (t) => c.inverse(t),
  description: (t) => c.dim(t),
  scrollInfo: (t) => c.dim(t),
  noMatch: (t) => c.dim(t),
};

export const editorTheme: EditorTheme = {
  borderColor: (t) => c.dim(t),
  selectList: selectListTheme,
};

export const markdownTheme: MarkdownTheme = {
  heading: (t) => c.bold(c.cyan(t)),
  link: (t) => c.underline(c.blue(t)),
  linkUrl: (t) => c.dim(t),
  code: (t) => c.yellow(t),
  codeBlock: (t) => t,
  codeBlockBorder: (t) => c.dim(t),
  quote: (t) => c.italic(t),
  quoteBorder: (t) => c.dim(t),
  hr: (t) => c.dim(t),
  listBullet: (t) => c.cyan(t),
  bold: (t) => c.bold(t),
  italic: (t) => c.italic(t),
  strikethrough: (t) => c.strikethrough(t),
  underline: (t) => c.underline(t),
};
