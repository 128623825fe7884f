/**
 * Probe questions for `bonsai eval --judge`: the judge model answers each from the summary alone,
 * then grades the answers against the summarized conversation, 0 to 5. Two calls per summary,
 * through the Summarizer interface, so any model bonsai can summarize with can judge. The prompts
 * and the reading of the answers are pure; `judgeSummary` makes the calls.
 */
import type { Summarizer } from "../summarizer/types.js";

export const PROBES = {
  recall: "What did the user ask for, and which constraints did the user set?",
  artifacts: "Which files were changed, and which errors are still unresolved?",
  continuation: "What should happen next, and is a question waiting for the user's answer?",
  decisions: "Which decisions were made, and for what reasons?",
} as const;
export type ProbeId = keyof typeof PROBES;
export const PROBE_IDS = Object.keys(PROBES) as ProbeId[];

export type JudgeScores = Record<ProbeId, number>;

/** The conversation is cut to this many characters in the grading prompt (head and tail kept). */
const MAX_CONVERSATION_CHARS = 200_000;

const JUDGE_SYSTEM = "You evaluate summaries of coding-agent sessions. Answer exactly in the JSON shape asked for, with no other text.";

const questions = () => PROBE_IDS.map((id) => `- "${id}": ${PROBES[id]}`).join("\n");

export function answerPrompt(summary: string): string {
  return [
    "<summary>",
    summary,
    "</summary>",
    "",
    "Answer each question using only the summary above. If the summary does not say, answer \"not in the summary\".",
    questions(),
    "",
    `Reply with one JSON object whose keys are ${PROBE_IDS.map((id) => `"${id}"`).join(", ")} and whose values are your answers as strings.`,
  ].join("\n");
}

function bounded(conversation: string): string {
  if (conversation.length <= MAX_CONVERSATION_CHARS) return conversation;
  const half = MAX_CONVERSATION_CHARS / 2;
  return `${conversation.slice(0, half)}\n\n[... ${conversation.length - MAX_CONVERSATION_CHARS} characters omitted ...]\n\n${conversation.slice(-half)}`;
}

export function gradePrompt(conversation: string, answers: Readonly<Record<string, string>>): string {
  return [
    "<conversation>",
    bounded(conversation),
    "</conversation>",
    "",
    "<answers>",
    ...PROBE_IDS.map((id) => `${id}: ${PROBES[id]}\nAnswer: ${answers[id] ?? "(no answer)"}`),
    "</answers>",
    "",
    "Grade each answer against the conversation: 5 = correct and complete, 3 = partly right or missing important details, 1 = mostly wrong or missing, 0 = no answer or wrong.",
    `Reply with one JSON object whose keys are ${PROBE_IDS.map((id) => `"${id}"`).join(", ")} and whose values are integers from 0 to 5.`,
  ].join("\n");
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
  for (const id of PROBE_IDS) {
    const value = Number(object[id]);
    scores[id] = Number.isFinite(value) ? Math.max(0, Math.min(5, Math.round(value))) : 0;
  }
  return scores;
}

export async function judgeSummary(judge: Summarizer, summary: string, conversation: string, signal?: AbortSignal): Promise<JudgeScores> {
  const ask = async (prompt: string) =>
    (await judge.summarize({ systemPrompt: JUDGE_SYSTEM, prompt, maxTokens: 2000, purpose: "history", ...(signal ? { signal } : {}) })).text;
  const answered = readJsonObject(await ask(answerPrompt(summary))) ?? {};
  const answers = Object.fromEntries(PROBE_IDS.map((id) => [id, typeof answered[id] === "string" ? (answered[id] as string) : ""]));
  return readScores(await ask(gradePrompt(conversation, answers)));
}
