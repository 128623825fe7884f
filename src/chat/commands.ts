/**
 * What a line typed into `bonsai chat` means: a message for the model, or one of the slash
 * commands. Pure: text in, a command out, so every rule here is checked without a terminal.
 */
import { wrapHanging } from "./wrap.js";

export type ChatInput =
  | { kind: "empty" }
  | { kind: "message"; text: string }
  | { kind: "compact"; instructions?: string; preview?: boolean }
  | { kind: "undoCompact"; branchSummary?: boolean }
  | { kind: "tree" }
  | { kind: "label"; label?: string }
  | { kind: "pin"; id?: string; unpin: boolean }
  | { kind: "fork" }
  | { kind: "session" }
  | { kind: "help" }
  | { kind: "quit" }
  | { kind: "unknown"; name: string; hint: string };

export interface ChatCommandInfo {
  name: string;
  args?: string;
  description: string;
  aliases?: string[];
}

export const CHAT_COMMANDS: readonly ChatCommandInfo[] = [
  {
    name: "compact",
    args: "[instructions]",
    description:
      "summarize older history now, optionally with what the summary should focus on; /compact --preview first puts the summary in the editor (Enter writes it, Escape cancels)",
  },
  { name: "undo-compact", description: "undo the latest compaction: continue from before it, with what came after; the compacted branch is kept in /tree" },
  { name: "undo-summary", description: "undo the latest branch summary (left by a /tree move): continue without it, with what came after; nothing is rewritten" },
  { name: "tree", description: "move to another point of the conversation tree" },
  { name: "label", args: "[text]", description: "label the current entry (no text: remove its label)" },
  { name: "pin", args: "[id]", description: "pin your latest message (or entry id): every later compaction carries it verbatim" },
  { name: "unpin", args: "[id]", description: "unpin your latest pinned message (or entry id)" },
  { name: "fork", description: "continue in a new session holding the current path (a new file, or a new id in the same database)" },
  { name: "session", description: "session file or database location, entries, tokens and cost" },
  { name: "help", description: "list the commands" },
  { name: "quit", description: "leave (the session is kept; the line printed on exit says how to resume it)", aliases: ["exit"] },
];

/** `/name` followed by whitespace or the end: a command word has no slash or dot in it. */
const COMMAND = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

/**
 * Parses one submitted line. A line starting with `//` sends the rest, starting with `/`, as a
 * message; a first word that looks like a path (`/usr/bin …`) is a message too.
 */
export function parseChatInput(raw: string): ChatInput {
  const text = raw.trim();
  if (text === "") return { kind: "empty" };
  if (text.startsWith("//")) return { kind: "message", text: text.slice(1) };
  const match = COMMAND.exec(text);
  if (!match) return { kind: "message", text };
  const name = match[1].toLowerCase();
  const rest = match[2]?.trim() || undefined;
  switch (resolveAlias(name)) {
    case "compact": {
      const preview = rest !== undefined && /^--preview(\s|$)/.test(rest);
      const instructions = preview ? rest.slice("--preview".length).trim() || undefined : rest;
      return { kind: "compact", ...(instructions ? { instructions } : {}), ...(preview ? { preview } : {}) };
    }
    case "undo-compact":
      return { kind: "undoCompact" };
    case "undo-summary":
      return { kind: "undoCompact", branchSummary: true };
    case "tree":
      return { kind: "tree" };
    case "label":
      return rest ? { kind: "label", label: rest } : { kind: "label" };
    case "pin":
    case "unpin":
      return rest ? { kind: "pin", id: rest, unpin: name === "unpin" } : { kind: "pin", unpin: name === "unpin" };
    case "fork":
      return { kind: "fork" };
    case "session":
      return { kind: "session" };
    case "help":
      return { kind: "help" };
    case "quit":
      return { kind: "quit" };
    default:
      return { kind: "unknown", name, hint: unknownCommandHint(name) };
  }
}

function resolveAlias(name: string): string {
  for (const command of CHAT_COMMANDS) {
    if (command.name === name || command.aliases?.includes(name)) return command.name;
  }
  return name;
}

/** One line: the closest command when there is one, and how to list them or send the text as is. */
export function unknownCommandHint(name: string): string {
  const closest = closestCommand(name);
  const guess = closest ? `did you mean /${closest}? ` : "";
  return `unknown command /${name}: ${guess}type /help for the commands, or start with // to send a message beginning with /`;
}

/** A command the typo is a prefix of, or within two edits of; undefined when none is close. */
export function closestCommand(name: string): string | undefined {
  const names = CHAT_COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
  const prefixed = names.find((candidate) => candidate.startsWith(name));
  if (prefixed) return resolveAlias(prefixed);
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const distance = editDistance(name, candidate);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best ? resolveAlias(best.name) : undefined;
}

/** Levenshtein distance with adjacent transpositions (a typed `/compcat` is one edit away). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The /help text, one command per line. */
/** The commands and keys, a description each; with `width`, descriptions wrap under their column. */
export function helpLines(width?: number): string[] {
  const rows: [string, string][] = [
    ...CHAT_COMMANDS.map((c): [string, string] => [`/${c.name}${c.args ? ` ${c.args}` : ""}`, c.description]),
    ["Escape", "stop the answer, a compaction or a branch summary"],
    ["Ctrl+D", "quit when the editor is empty"],
  ];
  return rows.flatMap(([usage, description]) => wrapHanging(usage.padEnd(24), description, width));
}
