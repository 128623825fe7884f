/**
 * Replaying a native compaction: every request to the model that made the context's latest
 * compaction carries the provider's payload in place of the readable summary message; a request
 * to any other model goes out as pi-ai builds it, with the readable summary. The rewrite happens
 * in pi-ai's `onPayload`, after the caller's own, so nothing else about the request changes.
 * What bonsai's readable summary adds to the provider's text (verbatim requests, pins, file lists)
 * goes with the payload as notes; a readable summary that no longer starts with the provider's
 * text (edited since) is sent instead of the payload.
 *
 * A provider that refuses the payload (an item from another account, a gateway without the beta)
 * must not leave the session stuck: the request is sent again with the readable summary, and that
 * compaction is never replayed again in this session.
 */
import type { StreamFn } from "@mariozechner/pi-agent-core";
import type { AssistantMessageEvent, AssistantMessageEventStream } from "@mariozechner/pi-ai";
import { COMPACTION_SUMMARY_INTRO } from "../messages/convert.js";
import { type NativePayload, type ProviderBody, replayNotes, replaysTo } from "../summarizer/native-lane.js";
import { laneById } from "../summarizer/native-lanes.js";

/** The context's latest compaction: its native payload and readable summary. */
export type ContextNative = () => { payload: NativePayload; summary: string } | undefined;

/** Whether a message's text is the summary message of `summary` (convertToLlm's wording). */
export function isSummaryMessage(text: string, summary: string): boolean {
  return text.startsWith(COMPACTION_SUMMARY_INTRO) && text.includes(summary.slice(0, 200));
}

export function replayingStream(base: StreamFn, contextNative: ContextNative, onRefused: (message: string) => void = () => {}): StreamFn {
  const refused = new WeakSet<object>();
  return async (model, context, options) => {
    const found = contextNative();
    const lane = found && replaysTo(found.payload, model) && !refused.has(found.payload) ? laneById(found.payload.lane) : undefined;
    const notes = lane && found ? replayNotes(lane, found.payload, found.summary) : undefined;
    if (!found || !lane || notes === undefined) return base(model, context, options);
    const headers = lane.replayHeaders?.({ model, hasTools: (context.tools?.length ?? 0) > 0, headers: options?.headers });
    const replayed = await base(model, context, {
      ...options,
      ...(headers ? { headers: { ...options?.headers, ...headers } } : {}),
      onPayload: async (payload, payloadModel) => {
        const given = ((await options?.onPayload?.(payload, payloadModel)) ?? payload) as ProviderBody;
        return lane.replay(given, found.payload, (text) => isSummaryMessage(text, found.summary), model, notes) ?? given;
      },
    });
    const { createAssistantMessageEventStream } = await import("@mariozechner/pi-ai");
    const out = createAssistantMessageEventStream();
    void relay(replayed, out, async (errorMessage) => {
      if (!lane.refusal.test(errorMessage)) return false;
      refused.add(found.payload);
      onRefused(`${model.provider}/${model.id} refused the replayed compaction (${errorMessage.slice(0, 200)}); sending the readable summary from now on`);
      const plain = await base(model, context, options);
      for await (const event of plain) out.push(event);
      return true;
    });
    return out;
  };
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
