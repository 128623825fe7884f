/**
 * The judge of `bonsai eval --judge`: a model answers probe questions from the summary alone, then
 * grades those answers against the summarized conversation on a written rubric of six dimensions,
 * 0 to 5. Probes are the general ones below plus one per kind of expected fact (when the facts are
 * known, the grader also sees them as the key, and what must not be stated as current). Run N
 * times, the scores come with their spread, and every sample's answers are kept. Two calls per
 * sample, through the Summarizer interface, so any model bonsai can summarize with can judge.
 * The prompts and the reading of the answers are pure; `judgeSummary` makes the calls.
 */
import type { Summarizer } from "../summarizer/types.js";
import type { EvalFact, FactKind } from "./eval-facts.js";
import type { NegativeFact } from "./eval-truth.js";

/** What a continuation needs from a summary, each graded 0–5 (after Factory's probe evaluation; our wording). */
export const RUBRIC = {
  accuracy: "Every statement agrees with the conversation: names, numbers, paths and outcomes are right, and nothing corrected, reversed or fixed is told as current.",
  context: "The reasons are there: why the work is done, why each decision was taken, what was tried and ruled out.",
  artifacts: "The trail of the work: which files were changed and how, which commands ran, which errors are still open.",
  completeness: "Every request the user made is accounted for: done, in progress or still to do.",
  continuity: "Someone taking over knows the next step and which questions wait for the user's answer.",
  instructions: "The user's rules that still hold are kept in the user's terms, and only the user's: nothing read in tool output is told as a request.",
} as const;
export type Dimension = keyof typeof RUBRIC;
export const DIMENSIONS = Object.keys(RUBRIC) as Dimension[];

export type JudgeScores = Record<Dimension, number>;

/** Questions every summary is asked. */
export const PROBES: Readonly<Record<string, string>> = {
  recall: "What did the user ask for, and which constraints did the user set?",
  artifacts: "Which files were changed, and which errors are still unresolved?",
  continuation: "What should happen next, and is a question waiting for the user's answer?",
  decisions: "Which decisions were made, and for what reasons?",
};

/** One more question per kind of fact the summary is expected to hold. */
const FACT_PROBES: Record<FactKind, string> = {
  request: "What is the user's latest request, in the user's words?",
  constraint: "Which rules set by the user hold now (after any correction)?",
  decision: "Which decisions hold now, and which were reversed?",
  error: "Which errors are still open, and which were fixed and verified?",
  file: "Which files were changed?",
  identifier: "Which names (functions, types, variables) and numbers does the work depend on?",
  question: "Which questions wait for the user's answer?",
};

/** The probes for a summary whose expected facts are `facts` (the general ones when none are known). */
export function probesFor(facts: readonly EvalFact[] = []): Record<string, string> {
  const kinds = [...new Set(facts.map((fact) => fact.kind))];
  return { ...PROBES, ...Object.fromEntries(kinds.map((kind) => [`facts.${kind}`, FACT_PROBES[kind]])) };
}

/** The conversation is cut to this many characters in the grading prompt (head and tail kept). */
const MAX_CONVERSATION_CHARS = 200_000;

export const JUDGE_SYSTEM = "You evaluate summaries of coding-agent sessions. Answer exactly in the JSON shape asked for, with no other text.";

const keys = (ids: readonly string[]) => ids.map((id) => `"${id}"`).join(", ");

export function answerPrompt(summary: string, probes: Readonly<Record<string, string>> = PROBES): string {
  return [
    "<summary>",
    summary,
    "</summary>",
    "",
    'Answer each question using only the summary above. If the summary does not say, answer "not in the summary".',
    ...Object.entries(probes).map(([id, question]) => `- "${id}": ${question}`),
    "",
    `Reply with one JSON object whose keys are ${keys(Object.keys(probes))} and whose values are your answers as strings.`,
  ].join("\n");
}

function bounded(conversation: string): string {
  if (conversation.length <= MAX_CONVERSATION_CHARS) return conversation;
  const half = MAX_CONVERSATION_CHARS / 2;
  return `${conversation.slice(0, half)}\n\n[... ${conversation.length - MAX_CONVERSATION_CHARS} characters omitted ...]\n\n${conversation.slice(-half)}`;
}

export interface GradeKey {
  /** what the summary should hold */
  facts?: readonly EvalFact[];
  /** what it must not state as current */
  negatives?: readonly NegativeFact[];
}

export function gradePrompt(conversation: string, answers: Readonly<Record<string, string>>, probes: Readonly<Record<string, string>> = PROBES, key: GradeKey = {}): string {
  const expected = key.facts?.length ? ["<expected>", ...key.facts.map((fact) => `- ${fact.kind}: ${fact.text}`), "</expected>", ""] : [];
  const retired = key.negatives?.length ? ["<no-longer-true>", ...key.negatives.map((fact) => `- ${fact.text}`), "</no-longer-true>", ""] : [];
  return [
    "<conversation>",
    bounded(conversation),
    "</conversation>",
    "",
    ...expected,
    ...retired,
    "<answers>",
    ...Object.entries(probes).map(([id, question]) => `${id}: ${question}\nAnswer: ${answers[id] ?? "(no answer)"}`),
    "</answers>",
    "",
    "The answers were given by someone who read only a summary of the conversation. Grade how well they let that person carry on the work, on each dimension:",
    ...DIMENSIONS.map((dimension) => `- "${dimension}": ${RUBRIC[dimension]}`),
    "",
    expected.length > 0 ? "<expected> lists what the summary should hold; an answer that misses one of them loses points on its dimension." : "",
    retired.length > 0 ? "<no-longer-true> lists what was true once and is not now; an answer that states one of them as current scores at most 1 on accuracy." : "",
    "Scale: 5 = right and complete, 4 = a minor gap, 3 = partly right or missing something important, 1 = mostly wrong or missing, 0 = nothing usable.",
    `Reply with one JSON object whose keys are ${keys(DIMENSIONS)} and whose values are integers from 0 to 5.`,
  ]
    .filter((line, i, all) => line !== "" || all[i - 1] !== "")
    .join("\n");
}

/** The first JSON object in a model's answer (models wrap JSON in prose or code fences). */
export function readJsonObject(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Scores from the grading answer, each clamped to 0–5; a missing or unreadable score is 0. */
export function readScores(text: string): JudgeScores {
  const object = readJsonObject(text) ?? {};
  const scores = {} as JudgeScores;
  for (const id of DIMENSIONS) {
    const value = Number(object[id]);
    scores[id] = Number.isFinite(value) ? Math.max(0, Math.min(5, Math.round(value))) : 0;
  }
  return scores;
}

export interface JudgeSample {
  answers: Record<string, string>;
  scores: JudgeScores;
}

export interface JudgeResult {
  /** mean over the samples, per dimension */
  scores: JudgeScores;
  /** lowest and highest score of the samples, per dimension */
  spread: Record<Dimension, [number, number]>;
  samples: JudgeSample[];
}

/** The mean and spread of the samples' scores. */
export function combineSamples(samples: readonly JudgeSample[]): JudgeResult {
  const scores = {} as JudgeScores;
  const spread = {} as Record<Dimension, [number, number]>;
  for (const dimension of DIMENSIONS) {
    const values = samples.map((sample) => sample.scores[dimension]);
    scores[dimension] = values.length > 0 ? Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100 : 0;
    spread[dimension] = values.length > 0 ? [Math.min(...values), Math.max(...values)] : [0, 0];
  }
  return { scores, spread, samples: [...samples] };
}

export interface JudgeOptions extends GradeKey {
  /** how many times the judge answers and grades (default 1) */
  samples?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export async function judgeSummary(judge: Summarizer, summary: string, conversation: string, options: JudgeOptions = {}): Promise<JudgeResult> {
  const probes = probesFor(options.facts);
  const ask = async (prompt: string) =>
    (
      await judge.summarize({
        systemPrompt: JUDGE_SYSTEM,
        prompt,
        maxTokens: 2000,
        purpose: "history",
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      })
    ).text;
  const samples: JudgeSample[] = [];
  for (let n = 0; n < (options.samples ?? 1); n++) {
    const answered = readJsonObject(await ask(answerPrompt(summary, probes))) ?? {};
    const answers = Object.fromEntries(Object.keys(probes).map((id) => [id, typeof answered[id] === "string" ? (answered[id] as string) : ""]));
    samples.push({ answers, scores: readScores(await ask(gradePrompt(conversation, answers, probes, options))) });
  }
  return combineSamples(samples);
}
