/**
 * Finished work folds out of the sections that would otherwise grow with every compaction: a
 * request whose file was changed after it is done (its changes are under Done, its words in the
 * verbatim requests), and a correction is under Constraints, so the Goal keeps what is still
 * open. Pure functions over text and paths.
 */
import { type ConversationFacts, sentences } from "./extractive-facts.js";
import { retiredValues } from "./lifecycle.js";
import { proseOf } from "./user-text.js";

/** Whether every sentence of `text` retires something ("Correction: not 60, use 140 per batch."). */
export function isCorrection(text: string): boolean {
  const said = sentences(proseOf(text)).filter((s) => /\p{L}/u.test(s) && !/^\p{L}+:$/u.test(s.trim()));
  return said.length > 0 && said.every((s) => retiredValues(s).length > 0);
}

/** What looks like a file path in `text`: a token with a slash or a file extension. */
export function namedPaths(text: string): string[] {
  const tokens = text.split(/[\s`'"“”‘’()[\]{}<>,;]+/).map((t) => t.replace(/[.:!?]+$/, ""));
  return [...new Set(tokens.filter((t) => /\p{L}/u.test(t) && (/\/[\w.-]/.test(t) || /^[\w-]+\.[a-z]{1,5}$/i.test(t)) && !/^https?:/.test(t)))];
}

/** Whether `path` and a path named in text are the same file (one may be relative to the other). */
const samePath = (path: string, named: string) => path === named || path.endsWith(`/${named}`) || named.endsWith(`/${path}`);

/** Whether `text` names a file among `changed` (paths changed after it was said). */
export function actedOn(text: string, changed: readonly string[]): boolean {
  return namedPaths(text).some((named) => changed.some((path) => samePath(path, named)));
}

/** Files changed successfully in the span after part `at`. */
export const changedAfter = (facts: Pick<ConversationFacts, "fileOps">, at: number): string[] =>
  facts.fileOps.filter((op) => op.kind !== "read" && op.ok && op.at > at).map((op) => op.path);
