/**
 * The native lanes, by the pi-ai API of the model they serve. A model whose API has no lane is
 * summarized by the next method of the chain; adding a provider is one module and one line here.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { anthropicLane } from "./native-anthropic.js";
import type { NativeLane } from "./native-lane.js";
import { openAiResponsesLane } from "./native-openai.js";

export const NATIVE_LANES: Readonly<Partial<Record<Api, NativeLane>>> = Object.freeze({
  "anthropic-messages": anthropicLane,
  "openai-responses": openAiResponsesLane,
});

/** The lane for the model's API, if it serves that model (its provider and id; native-lane.ts `serves`). */
export function laneFor(model: Model<Api>): NativeLane | undefined {
  const lane = NATIVE_LANES[model.api];
  return lane?.serves(model) ? lane : undefined;
}

/** The lane that wrote a stored payload (`preserveData.native.lane`). */
export function laneById(id: string): NativeLane | undefined {
  return Object.values(NATIVE_LANES).find((lane) => lane?.id === id);
}
