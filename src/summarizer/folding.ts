/**
 * Finished work folds out of the sections that would otherwise grow with every compaction: a
 * request whose file was changed after it is done (its changes are under Done, its words in the
 * verbatim requests), and a correction is under Constraints, so the Goal keeps what is still
 * open; a question the user answered is no longer awaited, one the user passed over still is.
 * Pure functions over text and paths.
 */
import { type ConversationFacts, isAnswer, lastQuestion, sentences } from "./extractive-facts.js";
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

/**
 * The assistant's questions the user passed over: a question followed by a user message that is
 * not an answer (no yes, no, go-ahead), so it is still open, oldest first. The question at the
 * very end, with no user message after it, is awaited, not passed over.
 */
export function passedOverQuestions(facts: Pick<ConversationFacts, "said" | "userTurns">): string[] {
  const out: string[] = [];
  for (const said of facts.said) {
    const question = said.role === "assistant" ? lastQuestion(said.text) : undefined;
    const next = question ? facts.userTurns.find((turn) => turn.at > said.at) : undefined;
    if (question && next && !isAnswer(next.text) && !out.includes(question)) out.push(question);
  }
  return out;
}

/** Whether the span's first user message answers a question asked before the span. */
export const answeredFirst = (facts: Pick<ConversationFacts, "userTurns">): boolean => facts.userTurns.length > 0 && isAnswer(facts.userTurns[0].text);
