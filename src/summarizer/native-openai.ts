/**
 * OpenAI's Responses compaction (`POST /responses/compact`) as a native lane.
 *
 * Compacting: the input the agent would send for the span (so the provider can read the cached
 * prefix) goes to `/responses/compact`; the answer's `output` is a compacted window (the user's
 * messages and one opaque `compaction` item) that stands for the span from then on. OpenAI writes
 * no readable text, so the readable summary beside it is bonsai's (native-summarizer.ts).
 *
 * Replaying: those items take the place of the summary message in the request's `input`.
 */
import {
  contentText,
  count,
  endpoint,
  NativeCompactionError,
  type NativeLane,
  type NativeOutcome,
  type NativeRequest,
  postJson,
  roughTokens,
} from "./native-lane.js";

interface Item {
  type?: string;
  role?: string;
  content?: unknown;
}

/** Items that describe the request rather than the conversation: the live request brings its own. */
const isInstruction = (item: Item) => item.role === "system" || item.role === "developer";

export const openAiResponsesLane: NativeLane = {
  id: "openai-responses",
  route: "responses/compact",
  writesText: false,
  minTokens: 0,
  // OpenAI's own endpoint, or a base URL the user named for the Responses API (provider "openai")
  serves: (model) => model.provider === "openai",
  // "The encrypted content for item cmp_… could not be verified" (code invalid_encrypted_content, which pi-ai's message leaves out)
  refusal: /encrypted[ _]content|could not be verified|compaction/i,

  async compact(request: NativeRequest): Promise<NativeOutcome> {
    const { model, body } = request;
    const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
    const answer = await postJson(
      endpoint(model.baseUrl, "responses/compact"),
      { ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}), ...model.headers },
      {
        model: body.model ?? model.id,
        input,
        ...(typeof body.instructions === "string" ? { instructions: body.instructions } : {}),
        ...(typeof body.prompt_cache_key === "string" ? { prompt_cache_key: body.prompt_cache_key } : {}),
      },
      request,
    );
    const output = Array.isArray(answer.output) ? (answer.output as Item[]) : [];
    if (!output.some((item) => item?.type === "compaction")) {
      throw new NativeCompactionError(`${model.provider}/${model.id} answered /responses/compact without a compaction item`);
    }
    const usage = (answer.usage ?? {}) as Record<string, unknown>;
    const cached = count((usage.input_tokens_details as Record<string, unknown> | undefined)?.cached_tokens);
    return {
      data: output.filter((item) => !isInstruction(item)),
      usage: { input: Math.max(0, count(usage.input_tokens) - cached), output: count(usage.output_tokens), cacheRead: cached, cacheWrite: 0 },
    };
  },

  // the window keeps the user's messages word for word; the compaction item is about the size the provider wrote
  replayedTokens: (outcome) =>
    (Array.isArray(outcome.data) ? (outcome.data as Item[]) : [])
      .filter((item) => item.role === "user")
      .reduce((sum, item) => sum + roughTokens(contentText(item.content)), outcome.usage.output),

  replay(body, stored, isSummary) {
    const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
    const at = input.findIndex((item) => item.role === "user" && isSummary(contentText(item.content)));
    if (at < 0 || !Array.isArray(stored.data)) return undefined;
    return { ...body, input: [...input.slice(0, at), ...(stored.data as Item[]), ...input.slice(at + 1)] };
  },
};
