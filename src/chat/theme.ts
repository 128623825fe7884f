/**
 * Colors of `bonsai chat`: a few named styles, and the display styles and pi-tui component themes
 * built from them. Plain terminals (NO_COLOR) get the same text without escapes.
 */
import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@mariozechner/pi-tui";
import { colors } from "../util/colors.js";
import type { BlockStyle } from "./transcript.js";

type Paint = (text: string) => string;

const c = colors();
const plain: Paint = (t) => t;
const quiet: Paint = c.dim;
const accent: Paint = c.cyan;
const muse: Paint = (t) => c.dim(c.italic(t));
const strong: Paint = (t) => c.bold(t);

export const style: Record<BlockStyle, Paint> = {
  user: strong,
  synthetic: muse,
  assistant: plain,
  thinking: muse,
  toolCall: accent,
  toolResult: quiet,
  toolError: c.red,
  summary: c.magenta,
  notice: quiet,
  success: c.green,
  warning: c.yellow,
  error: c.red,
};

export const ui = {
  accent,
  dim: quiet,
  bold: strong,
  leaf: (t: string) => c.yellow(c.bold(t)),
  label: (t: string) => c.cyan(c.bold(t)),
  compaction: c.magenta,
  branch: c.blue,
};

export const selectListTheme: SelectListTheme = {
  selectedPrefix: accent,
  selectedText: c.inverse,
  description: quiet,
  scrollInfo: quiet,
  noMatch: quiet,
};

export const editorTheme: EditorTheme = {
  borderColor: quiet,
  selectList: selectListTheme,
};

export const markdownTheme: MarkdownTheme = {
  heading: (t) => c.bold(c.cyan(t)),
  link: (t) => c.underline(c.blue(t)),
  linkUrl: quiet,
  code: c.yellow,
  codeBlock: plain,
  codeBlockBorder: quiet,
  quote: c.italic,
  quoteBorder: quiet,
  hr: quiet,
  listBullet: accent,
  bold: strong,
  italic: c.italic,
  strikethrough: c.strikethrough,
  underline: c.underline,
};
