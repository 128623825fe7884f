/**
 * What an AgentSession is built from: the session store and the model, plus optional seams
 * for summarizers, model lookup, overflow detection, pruning and the clock (tests use them).
 */
import type { AgentOptions, AgentTool, StreamFn, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { PruneConfig } from "../compaction/prune.js";
import type { SettingsInput } from "../config/settings.js";
import type { SessionManager } from "../session/manager.js";
import type { Summarizer } from "../summarizer/types.js";
import type { OverflowDetector } from "./overflow.js";

export interface AgentSessionOptions {
  sessionManager: SessionManager;
  /** the model the agent talks to */
  model: Model<Api>;
  systemPrompt?: string;
  tools?: AgentTool[];
  /**
   * Give the agent history_search and history_read (agent/recall.ts), to look back past a
   * compaction at the exact history, pruned output included (default false).
   */
  recall?: boolean;
  thinkingLevel?: ThinkingLevel;
  /** defaults with these applied (loadSettings() gives the user's and project's) */
  settings?: SettingsInput;
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  /** always summarize with this (tests, offline use); otherwise the remote endpoint or the models */
  summarizer?: Summarizer;
  /** how a candidate model becomes a summarizer (default: pi-ai's completeSimple, no SDK retries) */
  createSummarizer?: (model: Model<Api>, apiKey: string | undefined) => Summarizer | Promise<Summarizer>;
  /** looks up `compaction.models` entries (default: pi-ai's model registry) */
  resolveModel?: (provider: string, id: string) => Model<Api> | undefined;
  /** the agent's stream function (default: pi-ai's streamSimple) */
  streamFn?: StreamFn;
  agentOptions?: Omit<AgentOptions, "initialState" | "convertToLlm" | "getApiKey" | "streamFn">;
  /** default: pi-ai's isContextOverflow */
  detectOverflow?: OverflowDetector;
  /** tool-output pruning before each compaction check (default: the engine's defaults); false turns it off, and the free savings (settings.pruning) with it */
  prune?: Partial<PruneConfig> | false;
  now?: () => number;
}
