/**
 * The facts a summary of a span should keep, extracted from the span without a model, and the
 * retention score of a summary against them: a fact counts as kept when its text (or one of its
 * probes) appears in the summary verbatim or equal up to case, markup, spacing and trailing
 * punctuation. Used by `bonsai eval` (ops/eval.ts). Pure functions.
 */
import type { AgentMessage } from "../format/message-types.js";
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import { normalizeForMatch } from "../summarizer/coverage.js";
import { extractFacts, lastQuestion, placedConstraints, placedDecisions } from "../summarizer/extractive-facts.js";
import { parseLayout, type TranscriptPart } from "../summarizer/extractive-parse.js";

export type FactKind = "file" | "identifier" | "error" | "constraint" | "decision" | "request" | "question";
export const FACT_KINDS: readonly FactKind[] = ["file", "identifier", "error", "constraint", "decision", "request", "question"];

export interface EvalFact {
  kind: FactKind;
  text: string;
}

/** At most this many facts of one kind per span: a long session should not be scored on its decisions alone. */
const MAX_PER_KIND = 40;

/**
 * Code identifiers the user named: `backticked` ones and camelCase, snake_case or dotted words.
 * The character before a word is matched rather than looked behind at (faster over a long span;
 * never part of the previous match, which ends on a word character).
 */
function identifiers(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/`([A-Za-z_$][\w$.]*)(?:\(\))?`/g)) if (match[1].length >= 3) found.add(match[1]);
  for (const match of text.matchAll(/(?:^|[^\w./-])([a-z]+[A-Z][A-Za-z0-9]*|[a-z]+_[a-z0-9_]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)(?![\w/-])/g)) found.add(match[1]);
  return [...found];
}

/** The first sentence of a request, or its first 200 characters: what identifies it. */
function requestProbe(request: string): string {
  const line = request.trim().split("\n")[0];
  const sentence = /^(.{12,}?[.!?])(?:\s|$)/.exec(line)?.[1] ?? line;
  return sentence.slice(0, 200);
}

/** Facts of the messages summarized so far (oldest first): what a continuation needs from the summary. */
export function spanFacts(messages: readonly AgentMessage[]): EvalFact[] {
  return transcriptFacts(serializeConversation(convertToLlm(messages)));
}

/**
 * spanFacts of a span already serialized (serializeConversation), read in that layout only: a
 * message that quotes a model's own markup (oh-my-pi's `[Tool Call]:` lines) is text of the span,
 * not a sign that the whole span is written in it.
 */
export function transcriptFacts(transcript: string): EvalFact[] {
  return partFacts(parseLayout(transcript)).map(({ kind, text }) => ({ kind, text }));
}

/** A fact with the index of the transcript part it was taken from. */
export interface PartFact extends EvalFact {
  part: number;
}

/** The facts of a span's transcript parts, each with the part it was taken from. */
export function partFacts(parts: readonly TranscriptPart[]): PartFact[] {
  const facts = extractFacts(parts);
  const out: PartFact[] = [];
  /** `at`: the part the fact was taken from */
  const add = (kind: FactKind, found: Iterable<{ text: string; at: number }>) => {
    let n = 0;
    for (const { text, at } of found) {
      if (n >= MAX_PER_KIND) break;
      if (!text.trim() || out.some((f) => f.kind === kind && f.text === text)) continue;
      out.push({ kind, text, part: at });
      n++;
    }
  };
  const requests = facts.said.filter((s) => s.role === "user");
  add("file", facts.fileOps.filter((op) => op.kind !== "read").map((op) => ({ text: op.path, at: op.at })));
  add("identifier", requests.flatMap((request) => identifiers(request.text).map((text) => ({ text, at: request.at }))));
  add("error", facts.openErrors.map((e) => ({ text: e.line, at: e.at })));
  // only what still holds at the cut: a corrected requirement or a reversed decision is not a fact to keep
  // a sentence's place is its text's place plus a fraction; `from` is the text's
  add("constraint", placedConstraints(facts).map((item) => ({ text: item.text, at: item.from })));
  add("decision", placedDecisions(facts).map((item) => ({ text: item.text, at: item.from })));
  // the last request and the final answer are the last user and assistant texts said
  const lastRequest = requests.at(-1);
  if (facts.lastRequest && lastRequest) add("request", [{ text: requestProbe(facts.lastRequest), at: lastRequest.at }]);
  const question = lastQuestion(facts.finalAnswer);
  const finalAnswer = facts.said.findLast((s) => s.role === "assistant");
  if (question && finalAnswer) add("question", [{ text: question, at: finalAnswer.at }]);
  return out;
}

export interface KindScore {
  found: number;
  total: number;
}

export interface RetentionScore {
  /** found / total, 1 when there is nothing to find */
  retention: number;
  found: number;
  total: number;
  byKind: Partial<Record<FactKind, KindScore>>;
  missing: EvalFact[];
}

export function scoreRetention(summary: string, facts: readonly EvalFact[]): RetentionScore {
  const haystack = normalizeForMatch(summary);
  const byKind: Partial<Record<FactKind, KindScore>> = {};
  const missing: EvalFact[] = [];
  for (const fact of facts) {
    const score = byKind[fact.kind] ?? { found: 0, total: 0 };
    byKind[fact.kind] = score;
    score.total++;
    if (haystack.includes(normalizeForMatch(fact.text))) score.found++;
    else missing.push(fact);
  }
  const found = facts.length - missing.length;
  return { retention: facts.length === 0 ? 1 : found / facts.length, found, total: facts.length, byKind, missing };
}
