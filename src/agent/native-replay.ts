/**
 * Replaying a native compaction: every request to the model that made the context's latest
 * compaction carries the provider's payload in place of the readable summary message; a request
 * to any other model goes out as pi-ai builds it, with the readable summary. The rewrite happens
 * in pi-ai's `onPayload`, after the caller's own, so nothing else about the request changes.
 * What bonsai's readable summary adds to the provider's text (verbatim requests, pins, file lists)
 * goes with the payload as notes; a readable summary that no longer starts with the provider's
 * text (edited since) is sent instead of the payload. The next compaction request is rewritten
 * the same way, so its prefix is the one the provider cached.
 *
 * A provider that refuses the payload (an item from another account, a gateway without the beta)
 * must not leave the session stuck: the request is sent again with the readable summary, and that
 * compaction is never replayed again in this session.
 */
import type { StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model } from "@mariozechner/pi-ai";
import { COMPACTION_SUMMARY_INTRO } from "../messages/convert.js";
import { type NativeLane, type NativePayload, type ProviderBody, replayNotes, replaysTo } from "../summarizer/native-lane.js";
import { laneById } from "../summarizer/native-lanes.js";
import { errorText } from "../util/error-text.js";

/** The context's latest compaction: its native payload and readable summary. */
export type ContextNative = () => { payload: NativePayload; summary: string } | undefined;

/** Whether a message's text is the summary message of `summary` (convertToLlm's wording). */
export function isSummaryMessage(text: string, summary: string): boolean {
  return text.startsWith(COMPACTION_SUMMARY_INTRO) && text.includes(summary.slice(0, 200));
}

interface Plan {
  lane: NativeLane;
  payload: NativePayload;
  rewrite: (body: ProviderBody) => ProviderBody;
}

export interface NativeReplay {
  /** the agent's stream function, replaying where it may */
  stream(base: StreamFn): StreamFn;
  /** a request body for `model` as the stream would send it */
  rewrite(model: Model<Api>, body: ProviderBody): ProviderBody;
}

export function nativeReplay(contextNative: ContextNative, onRefused: (message: string) => void = () => {}): NativeReplay {
  const refused = new WeakSet<object>();
  const plan = (model: Model<Api>): Plan | undefined => {
    const found = contextNative();
    if (!found || refused.has(found.payload) || !replaysTo(found.payload, model)) return undefined;
    const lane = laneById(found.payload.lane);
    const notes = lane && replayNotes(lane, found.payload, found.summary);
    if (!lane || notes === undefined) return undefined;
    const isSummary = (text: string) => isSummaryMessage(text, found.summary);
    return { lane, payload: found.payload, rewrite: (body) => lane.replay(body, found.payload, isSummary, model, notes) ?? body };
  };

  return {
    rewrite: (model, body) => plan(model)?.rewrite(body) ?? body,
    stream: (base) => async (model, context, options) => {
      const replay = plan(model);
      if (!replay) return base(model, context, options);
      const headers = replay.lane.replayHeaders?.({ model, hasTools: (context.tools?.length ?? 0) > 0, headers: options?.headers, apiKey: options?.apiKey });
      const replayed = await base(model, context, {
        ...options,
        ...(headers ? { headers: { ...options?.headers, ...headers } } : {}),
        onPayload: async (payload, payloadModel) => replay.rewrite(((await options?.onPayload?.(payload, payloadModel)) ?? payload) as ProviderBody),
      });
      const { createAssistantMessageEventStream } = await import("@mariozechner/pi-ai");
      const out = createAssistantMessageEventStream();
      const fallback = async (errorMessage: string) => {
        if (!replay.lane.refusal.test(errorMessage)) return false;
        refused.add(replay.payload);
        onRefused(`${model.provider}/${model.id} refused the replayed compaction (${errorMessage.slice(0, 200)}); sending the readable summary from now on`);
        for await (const event of await base(model, context, options)) out.push(event);
        return true;
      };
      void relay(replayed, out, fallback).catch((error: unknown) => out.push({ type: "error", reason: "error", error: failed(model, errorText(error)) }));
      return out;
    },
  };
}

/** An answer that failed before it began, for a stream that could not go on. */
function failed(model: Model<Api>, errorMessage: string): AssistantMessage {
  const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  return { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: zero, stopReason: "error", errorMessage, timestamp: Date.now() };
}

/**
 * Passes `from`'s events on. Until the answer's first content, the opening events are held back:
 * an error then may be a refusal, which `fallback` answers (true) with a whole new answer instead.
 */
async function relay(from: AssistantMessageEventStream, out: AssistantMessageEventStream, fallback: (errorMessage: string) => Promise<boolean>): Promise<void> {
  const held: AssistantMessageEvent[] = [];
  let started = false;
  try {
    for await (const event of from) {
      if (!started && event.type === "start") {
        held.push(event);
      } else if (!started && event.type === "error" && (await fallback(event.error.errorMessage ?? ""))) {
        return;
      } else {
        started = true;
        for (const early of held.splice(0)) out.push(early);
        out.push(event);
      }
    }
  } finally {
    out.end();
  }
}
