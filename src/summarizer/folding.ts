/**
 * Finished work folds out of the sections that would otherwise grow with every compaction: a
 * request whose file was changed after it is done (its changes are under Done, its words in the
 * verbatim requests), and a correction is under Constraints, so the Goal keeps what is still
 * open; a question the user answered is no longer awaited, one the user passed over still is.
 * Pure functions over text and paths.
 */
import { type ConversationFacts, isAnswer, lastQuestion } from "./extractive-facts.js";
import { sentences } from "./sentences.js";

/** Replies this short that name no file are the answer itself ("8443", "Use Postgres"), not a new request. */
const SHORT_REPLY = 40;

/** Whether a user message answers the question before it: a yes, a no, a go-ahead, or a short reply. */
const answers = (text: string) => isAnswer(text) || (text.trim().length <= SHORT_REPLY && namedPaths(text).length === 0);
import { retiredValues } from "./lifecycle.js";
import { proseOf } from "./user-text.js";

/** How a correction opens: "Correction:", "No, not 8080…", "Actually…", in the languages the lifecycle reads. */
const CORRECTION_OPENING =
  /^(?:correction|actually|no|nope|not|rather|instead|wait|sorry|correzione|anzi|invece|non|korrektur|eigentlich|nein|nicht|doch|en fait|plutôt|pas|corrección|en realidad)(?![\p{L}])/iu;

/** Whether `text` is a correction and nothing else: it opens as one and every sentence retires something ("Correction: not 60, use 140 per batch."). */
export function isCorrection(text: string): boolean {
  const said = sentences(proseOf(text)).filter((s) => /\p{L}/u.test(s) && !/^\p{L}+:$/u.test(s.trim()));
  return said.length > 0 && CORRECTION_OPENING.test(said[0].trim()) && said.every((s) => retiredValues(s).length > 0);
}

/** What looks like a file path in `text`: a token with a slash or a file extension. */
export function namedPaths(text: string): string[] {
  const tokens = text.split(/[\s`'"“”‘’()[\]{}<>,;]+/).map((t) => t.replace(/[.:!?]+$/, ""));
  return [...new Set(tokens.filter((t) => /\p{L}/u.test(t) && (/\/[\w.-]/.test(t) || /^[\w-]+\.[a-z]{1,5}$/i.test(t)) && !/^https?:/.test(t)))];
}

/**
 * Whether `path` and a path named in text are the same file: equal, or an absolute one ending in
 * the relative one (a tool's `/repo/src/a.ts` and the user's `src/a.ts`). Two relative paths that
 * only share their last part (`package.json`, `packages/web/package.json`) are different files.
 */
const samePath = (path: string, named: string) =>
  path === named || (path.startsWith("/") && !named.startsWith("/") && path.endsWith(`/${named}`)) || (named.startsWith("/") && !path.startsWith("/") && named.endsWith(`/${path}`));

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
  facts.said.forEach((said, i) => {
    // only what the assistant last said before the user spoke: a question asked and answered in
    // passing ("Why does it fail? The alias is missing.") waits for no one
    const last = said.role === "assistant" && facts.said[i + 1]?.role !== "assistant";
    const question = last ? lastQuestion(said.text) : undefined;
    if (question && !said.text.trim().endsWith(question)) return;
    const next = question ? facts.userTurns.find((turn) => turn.at > said.at) : undefined;
    if (question && next && !answers(next.text) && !out.includes(question)) out.push(question);
  });
  return out;
}

/** Whether the span's first user message answers a question asked before the span. */
export const answeredFirst = (facts: Pick<ConversationFacts, "userTurns">): boolean => facts.userTurns.length > 0 && answers(facts.userTurns[0].text);
