/**
 * Replaying a native compaction: every request to the model that made the context's latest
 * compaction carries the provider's payload in place of the readable summary message; a request
 * to any other model goes out as pi-ai builds it, with the readable summary. The rewrite happens
 * in pi-ai's `onPayload`, after the caller's own, so nothing else about the request changes.
 */
import type { StreamFn } from "@mariozechner/pi-agent-core";
import { COMPACTION_SUMMARY_INTRO } from "../messages/convert.js";
import { type NativePayload, type ProviderBody, replaysTo } from "../summarizer/native-lane.js";
import { laneById } from "../summarizer/native-lanes.js";

/** The context's latest compaction: its native payload and readable summary. */
export type ContextNative = () => { payload: NativePayload; summary: string } | undefined;

/** Whether a message's text is the summary message of `summary` (convertToLlm's wording). */
export function isSummaryMessage(text: string, summary: string): boolean {
  return text.startsWith(COMPACTION_SUMMARY_INTRO) && text.includes(summary.slice(0, 200));
}

export function replayingStream(base: StreamFn, contextNative: ContextNative): StreamFn {
  return (model, context, options) => {
    const found = contextNative();
    const lane = found && replaysTo(found.payload, model) ? laneById(found.payload.lane) : undefined;
    if (!found || !lane) return base(model, context, options);
    const headers = lane.replayHeaders?.({ model, hasTools: (context.tools?.length ?? 0) > 0, headers: options?.headers });
    return base(model, context, {
      ...options,
      ...(headers ? { headers: { ...options?.headers, ...headers } } : {}),
      onPayload: async (payload, payloadModel) => {
        const given = ((await options?.onPayload?.(payload, payloadModel)) ?? payload) as ProviderBody;
        return lane.replay(given, found.payload, (text) => isSummaryMessage(text, found.summary), model) ?? given;
      },
    });
  };
}
