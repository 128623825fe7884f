/**
 * Prose cut into what the extractive summarizer copies: sentences (code blocks, tables, headings
 * and quotes left out), list items, and the first sentences of a message. Pure functions.
 */
import { linesOutsideFences } from "./user-text.js";

/** Sentences of prose, code blocks and tables left out. Lines are split at sentence ends. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const raw of linesOutsideFences(text)) {
    const line = raw.trim();
    if (!line || line.startsWith("|") || line.startsWith("#") || line.startsWith(">")) continue;
    const body = line.replace(/^(?:[-*+]|\d+[.)])\s+/, "").replace(/^\[[ xX]\]\s*/, "");
    for (const sentence of splitAtSentenceEnds(body)) {
      if (sentence.replace(/[`*_]/g, "").trim().length >= 12) out.push(sentence.trim());
    }
  }
  return out;
}

/** A sentence's end and the spacing after it, before more text. */
const SENTENCE_END = /[.!?。！？](\s+)(?=\S)/g;

/** `line` split after each sentence end, the spacing there dropped (one scan, no look-behind at every character). */
function splitAtSentenceEnds(line: string): string[] {
  const out: string[] = [];
  let from = 0;
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(line); m; m = SENTENCE_END.exec(line)) {
    out.push(line.slice(from, m.index + 1));
    from = m.index + 1 + m[1].length;
  }
  out.push(line.slice(from));
  return out;
}

/** List items of a text ("- x", "1. x"), outside code blocks. */
export function listItems(text: string): string[] {
  const items: string[] = [];
  for (const raw of linesOutsideFences(text)) {
    const match = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(.+)$/.exec(raw);
    if (match && match[1].trim().length >= 4) items.push(match[1].trim());
  }
  return items;
}

/** The first sentences of a message, up to about `max` characters. */
export function condense(text: string, max = 300): string {
  const picked: string[] = [];
  let length = 0;
  for (const sentence of sentences(text)) {
    if (picked.length > 0 && length + sentence.length > max) break;
    picked.push(sentence);
    length += sentence.length + 1;
  }
  return picked.length > 0 ? picked.join(" ") : text.replace(/\s+/g, " ").trim();
}
