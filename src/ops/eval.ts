/**
 * `evaluateSummaries`: the operation behind `bonsai eval`. For each session, compact its current
 * branch in chained rounds at the points an agent would (ops/eval-rounds.ts), with each
 * summarizer on the same spans side by side, and score every round: retention of the facts of the
 * summarized span (ops/eval-facts.ts, or the facts a caller planted), optional judge probes
 * (ops/eval-judge.ts), compression, summary tokens, growth since round 1, time and cost. Sessions
 * are opened read-only; nothing is written.
 */
import type { SessionEntry } from "../format/entry-types.js";
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import type { GuardSettings } from "../summarizer/summary-guard.js";
import type { Summarizer } from "../summarizer/types.js";
import { type EvalFact, type FactKind, type KindScore, scoreRetention, spanFacts } from "./eval-facts.js";
import { type JudgeResult, judgeSummary } from "./eval-judge.js";
import { datasetHash, type EvalPins, promptHash } from "./eval-pins.js";
import { compactionPoints, messagesBefore, type RoundResult, runRounds } from "./eval-rounds.js";
import { type NegativeFact, negativesAtCut, rawSummary, wronglyStated } from "./eval-truth.js";
import { type LazySummarizer, resolveSummarizer } from "./lazy-summarizer.js";
import { resolveEntryId } from "./entry-id.js";
import { readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

/** A fact a caller knows is in the session (a planted one): where it appears and what supersedes it. */
export interface KnownFact extends EvalFact {
  entryId: string;
  /** the entry after which the fact no longer holds (a newer request, the answer to a question) */
  supersededBy?: string;
}

export interface EvalSession {
  target: SessionTarget;
  /** scored instead of the facts extracted from the span */
  facts?: readonly KnownFact[];
  /** what a summary must not state as current (a corrected requirement, a reversed decision, a fixed error) */
  mustNotState?: readonly NegativeFact[];
}

export interface EvalSummarizer {
  /** the label in the report ("extractive", "model:anthropic/claude-haiku-4-5") */
  label: string;
  summarizer: LazySummarizer;
}

export interface EvaluateOptions {
  /** chained compactions per session (default 3) */
  rounds?: number;
  /** the first round compacts with the leaf at this entry */
  at?: string;
  /** estimated tokens kept verbatim (default 10% of the branch) */
  keepRecentTokens?: number;
  reserveTokens?: number;
  /** the verbatim section and the coverage check (on by default, as in every compaction) */
  guard?: GuardSettings;
  judge?: LazySummarizer;
  /** how many times the judge answers and grades each summary (default 1) */
  judgeSamples?: number;
  judgeTemperature?: number;
  /** the bonsai build, for the report's pins (the CLI knows its version and commit) */
  build?: EvalPins["bonsai"];
  signal?: AbortSignal;
  onWarning?: WarningListener;
  /** hears each finished round: `done` of `total` rounds so far */
  onProgress?: (progress: { done: number; total: number; session: string; summarizer: string }) => void;
}

export interface RoundScore {
  round: number;
  leafId: string;
  firstKeptEntryId: string;
  retention: number;
  found: number;
  facts: number;
  byKind: Partial<Record<FactKind, KindScore>>;
  /** what the summary lost (at most 20) */
  missing: EvalFact[];
  summaryTokens: number;
  /** summarized tokens per summary token */
  compression: number;
  /** summary tokens over round 1's */
  growth: number;
  ms: number;
  costUsd: number;
  /** facts the coverage check appended */
  coverageAdded: number;
  /** retention in the summarizer's own text, without the file lists and the guard's sections */
  raw: { retention: number; found: number };
  /** negative facts the summary states as current (in the raw text: `raw`) */
  wrong: { count: number; raw: number; texts: string[] };
  /** the judge's scores per dimension (mean of its samples), their spread, and every sample's answers */
  judge?: JudgeResult;
}

export interface SummarizerEval {
  summarizer: string;
  rounds: RoundScore[];
  /** set when the summarizer failed; the rounds before the failure are kept */
  error?: string;
}

export interface SessionEval {
  file: string;
  branchEntries: number;
  results: SummarizerEval[];
}

export interface EvalReport {
  rounds: number;
  /** what the evaluation ran with (eval-pins.ts) */
  pins: EvalPins;
  sessions: SessionEval[];
}

/** The facts that hold at a cut: planted ones that appear before it and are not yet superseded. */
export function factsAtCut(path: readonly SessionEntry[], facts: readonly KnownFact[], cut: number): EvalFact[] {
  const index = new Map(path.map((entry, i) => [entry.id, i]));
  return facts
    .filter((fact) => {
      const at = index.get(fact.entryId);
      const until = fact.supersededBy === undefined ? undefined : index.get(fact.supersededBy);
      return at !== undefined && at < cut && (until === undefined || until >= cut);
    })
    .map(({ kind, text }) => ({ kind, text }));
}

export function scoreRound(
  path: readonly SessionEntry[],
  round: RoundResult,
  first: RoundResult | undefined,
  known?: readonly KnownFact[],
  negatives: readonly NegativeFact[] = [],
): RoundScore {
  const facts = known ? factsAtCut(path, known, round.cutIndex) : spanFacts(messagesBefore(path, round.cutIndex));
  const score = scoreRetention(round.summary, facts);
  const raw = rawSummary(round.summary);
  const rawScore = scoreRetention(raw, facts);
  const applying = negativesAtCut(new Map(path.map((entry, i) => [entry.id, i])), negatives, round.cutIndex);
  const wrong = wronglyStated(round.summary, applying);
  return {
    round: round.round,
    leafId: round.leafId,
    firstKeptEntryId: round.firstKeptEntryId,
    retention: score.retention,
    found: score.found,
    facts: score.total,
    byKind: score.byKind,
    missing: score.missing.slice(0, 20),
    summaryTokens: round.summaryTokens,
    compression: round.summaryTokens > 0 ? round.summarizedTokens / round.summaryTokens : 0,
    growth: first && first.summaryTokens > 0 ? round.summaryTokens / first.summaryTokens : 1,
    ms: round.ms,
    costUsd: round.costUsd,
    coverageAdded: round.coverageAdded,
    raw: { retention: rawScore.retention, found: rawScore.found },
    wrong: { count: wrong.length, raw: wronglyStated(raw, applying).length, texts: wrong.map((fact) => fact.text) },
  };
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function evaluateSummaries(
  sessions: readonly (SessionTarget | EvalSession)[],
  summarizers: readonly EvalSummarizer[],
  options: EvaluateOptions = {},
): Promise<EvalReport> {
  const rounds = options.rounds ?? 3;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`rounds must be a positive integer, got ${rounds}`);
  if (summarizers.length === 0) throw new Error("no summarizer to evaluate");
  const specs = sessions.map((s): EvalSession => (typeof s === "object" && "target" in s ? s : { target: s }));
  const total = specs.length * summarizers.length * rounds;
  let done = 0;
  const judge = options.judge ? await resolveSummarizer(options.judge, "the judge") : undefined;
  const made = new Map<string, Summarizer>();
  const guard = { verbatimRequests: options.guard?.verbatimRequests !== false, coverageCheck: options.guard?.coverageCheck !== false };
  const pins: EvalPins = { bonsai: options.build ?? {}, promptHash: promptHash(), summarizers: [], datasetHash: "", guard, rounds };
  if (judge) pins.judge = { model: judge.name, samples: options.judgeSamples ?? 1, ...(options.judgeTemperature !== undefined ? { temperature: options.judgeTemperature } : {}) };
  const report: EvalReport = { rounds, pins, sessions: [] };
  const branches: SessionEntry[][] = [];

  for (const spec of specs) {
    const opened = await readTarget(spec.target, options.onWarning);
    const sessionEval = await withSession(opened, async () => {
      const path = opened.session.getBranch();
      branches.push(path);
      let atIndex: number | undefined;
      if (options.at !== undefined) {
        // as every other id option: a unique prefix of at least 4 characters, or the whole id
        const id = resolveEntryId(opened.session, options.at);
        atIndex = path.findIndex((entry) => entry.id === id);
        if (atIndex < 0) throw new Error(`${opened.file}: entry ${id} is not on the current branch`);
      }
      const points = compactionPoints(path, rounds, atIndex);
      const result: SessionEval = { file: opened.file, branchEntries: path.length, results: [] };
      for (const { label, summarizer: source } of summarizers) {
        const evaluated: SummarizerEval = { summarizer: label, rounds: [] };
        result.results.push(evaluated);
        const progress = () => options.onProgress?.({ done, total, session: opened.file, summarizer: label });
        try {
          const summarizer = made.get(label) ?? (await resolveSummarizer(source, label));
          if (!made.has(label)) pins.summarizers.push({ label, model: summarizer.name });
          made.set(label, summarizer);
          const settings = {
            ...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
            ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
          };
          const results = await runRounds(path, points, summarizer, {
            settings,
            ...(options.guard ? { guard: options.guard } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
            onRound: () => {
              done++;
              progress();
            },
          });
          for (const round of results) {
            const score = scoreRound(path, round, results[0], spec.facts, spec.mustNotState);
            if (judge) {
              const conversation = serializeConversation(convertToLlm(messagesBefore(path, round.cutIndex)));
              score.judge = await judgeSummary(judge, round.summary, conversation, {
                ...(spec.facts ? { facts: factsAtCut(path, spec.facts, round.cutIndex) } : {}),
                negatives: negativesAtCut(new Map(path.map((entry, i) => [entry.id, i])), spec.mustNotState ?? [], round.cutIndex),
                ...(options.judgeSamples !== undefined ? { samples: options.judgeSamples } : {}),
                ...(options.judgeTemperature !== undefined ? { temperature: options.judgeTemperature } : {}),
                ...(options.signal ? { signal: options.signal } : {}),
              });
            }
            evaluated.rounds.push(score);
          }
        } catch (error) {
          if (options.signal?.aborted) throw error;
          evaluated.error = errorMessage(error);
        }
        done = Math.max(done, (report.sessions.length * summarizers.length + result.results.length) * rounds);
        progress();
      }
      return result;
    });
    report.sessions.push(sessionEval);
  }
  pins.datasetHash = datasetHash(branches, specs.map((spec) => ({ facts: spec.facts ?? null, mustNotState: spec.mustNotState ?? null })));
  return report;
}
