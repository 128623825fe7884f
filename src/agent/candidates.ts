/**
 * Which models may summarize for a compaction, in order (docs/ARCHITECTURE.md, decision 11):
 * the dedicated `compaction.model` when set, the current model, then the configured
 * `compaction.models`, without duplicates, leaving
 * out models whose context window cannot hold the summarization request. Pure: models are
 * looked up through `resolve`.
 */

export interface CandidateModel {
  provider: string;
  id: string;
  /** tokens; 0 when unknown (never skipped for size) */
  contextWindow: number;
}

export interface SkippedCandidate {
  ref: string;
  reason: string;
}

export interface CandidateSelection<M extends CandidateModel> {
  candidates: M[];
  skipped: SkippedCandidate[];
}

/** "provider/id" -> parts. The id may itself contain slashes (openrouter/anthropic/claude-…). */
export function parseModelRef(ref: string): { provider: string; id: string } | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { provider: ref.slice(0, slash), id: ref.slice(slash + 1) };
}

export const modelRef = (model: { provider: string; id: string }): string => `${model.provider}/${model.id}`;

/**
 * Tokens a model must hold to summarize in one request: the input, the answer, and a margin
 * for the instructions around the conversation.
 */
export function requiredContextWindow(inputTokens: number, maxOutputTokens: number, promptOverhead = 2000): number {
  return inputTokens + maxOutputTokens + promptOverhead;
}

export function selectCandidates<M extends CandidateModel>(input: {
  current: M | undefined;
  configured: readonly string[];
  /** `compaction.model`: tried before the current model */
  preferred?: string;
  resolve: (provider: string, id: string) => M | undefined;
  /** see requiredContextWindow */
  requiredTokens: number;
}): CandidateSelection<M> {
  const seen = new Set<string>();
  const listed: M[] = [];
  const skipped: SkippedCandidate[] = [];
  const current = input.current;
  const refs = [...(input.preferred ? [input.preferred] : []), ...(current ? [modelRef(current)] : []), ...input.configured];
  for (const ref of refs) {
    if (current && ref === modelRef(current) && !seen.has(ref)) {
      seen.add(ref);
      listed.push(current);
      continue;
    }
    const parts = parseModelRef(ref.trim());
    if (!parts) {
      skipped.push({ ref, reason: 'not a "provider/model-id" reference' });
      continue;
    }
    const key = modelRef(parts);
    if (seen.has(key)) continue;
    seen.add(key);
    const model = input.resolve(parts.provider, parts.id);
    if (!model) {
      skipped.push({ ref, reason: "unknown model" });
      continue;
    }
    listed.push(model);
  }

  const fits = (model: M) => !(model.contextWindow > 0) || model.contextWindow >= input.requiredTokens;
  const candidates = listed.filter(fits);
  for (const model of listed) {
    if (!fits(model)) {
      skipped.push({
        ref: modelRef(model),
        reason: `context window ${model.contextWindow} cannot hold ${input.requiredTokens} tokens`,
      });
    }
  }
  // When nothing fits, the largest window still beats giving up: the summarizer splits the
  // input into chunks that fit.
  if (candidates.length === 0 && listed.length > 0) {
    const largest = listed.reduce((best, model) => (model.contextWindow > best.contextWindow ? model : best));
    candidates.push(largest);
    const at = skipped.findIndex((s) => s.ref === modelRef(largest));
    if (at >= 0) skipped.splice(at, 1);
  }
  return { candidates, skipped };
}
