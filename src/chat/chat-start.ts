/**
 * How a chat reached its model, remembered in the session so that `--continue` and `--session`
 * resume with it: the model_change the chat writes before its first message carries a `chat`
 * field with the server's base URL and an explicit context window (never a key; pi and oh-my-pi
 * ignore the field). Flags that name another model win; the environment comes after the session.
 */
import type { ModelChangeEntry, SessionEntry } from "../format/entry-types.js";
import type { ChatModelOptions } from "./model.js";

/** What a model_change of `bonsai chat` records besides the model: how to reach it again. */
export interface ChatStart {
  baseUrl?: string;
  /** the protocol `baseUrl` speaks, when it is not chat completions */
  api?: string;
  contextWindow?: number;
}

export interface RememberedModel extends ChatStart {
  provider: string;
  modelId: string;
}

/** The provider every `--base-url` model has (summarizer/pi-ai.ts). */
const OPENAI_COMPATIBLE = "openai-compatible";

/** The last model change on the branch, with how the chat reached that model when it says. */
export function rememberedModel(branch: readonly SessionEntry[]): RememberedModel | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type !== "model_change") continue;
    const named = modelOf(entry);
    if (!named) continue;
    const chat = (entry as { chat?: unknown }).chat as Record<string, unknown> | undefined;
    const remembered: RememberedModel = { ...named };
    if (typeof chat?.baseUrl === "string") remembered.baseUrl = chat.baseUrl;
    if (typeof chat?.api === "string") remembered.api = chat.api;
    if (typeof chat?.contextWindow === "number" && chat.contextWindow > 0) remembered.contextWindow = chat.contextWindow;
    return remembered;
  }
  return undefined;
}

function modelOf(entry: ModelChangeEntry): { provider: string; modelId: string } | undefined {
  if (entry.provider && entry.modelId) return { provider: entry.provider, modelId: entry.modelId };
  const slash = entry.model?.indexOf("/") ?? -1;
  if (entry.model && slash > 0) return { provider: entry.model.slice(0, slash), modelId: entry.model.slice(slash + 1) };
  return undefined;
}

const sameUrl = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/**
 * The model options of a resumed chat: the flags, completed from what the session remembers.
 * No model flag: the remembered model (its server, id and window). `--base-url` of the server
 * it was started with (or of a session that did not record one) and no `--model-id`: the
 * remembered id and window. Any other model flag starts from scratch.
 */
export function resumedModelOptions(flags: ChatModelOptions, remembered: RememberedModel | undefined): ChatModelOptions {
  if (!remembered) return flags;
  const window = (options: ChatModelOptions): ChatModelOptions => {
    const contextWindow = flags.contextWindow ?? remembered.contextWindow;
    return contextWindow === undefined ? options : { ...options, contextWindow };
  };
  if (flags.model) return flags;
  if (flags.baseUrl) {
    if (flags.modelId) return flags;
    // the same server as recorded, or a session that recorded none of a chat-completions server
    if (remembered.baseUrl === undefined ? remembered.provider !== OPENAI_COMPATIBLE : !sameUrl(remembered.baseUrl, flags.baseUrl)) return flags;
    return window({ ...flags, ...(flags.api === undefined && remembered.api !== undefined ? { api: remembered.api } : {}), modelId: remembered.modelId });
  }
  if (remembered.baseUrl !== undefined) {
    const api = remembered.api === undefined ? {} : { api: remembered.api };
    return window({ ...flags, baseUrl: remembered.baseUrl, ...api, modelId: flags.modelId ?? remembered.modelId });
  }
  if (remembered.provider === OPENAI_COMPATIBLE) return flags; // the session does not say which server
  return window({ ...flags, model: `${remembered.provider}/${remembered.modelId}` });
}

/** What the chat records of how it reached the model: the server (from the flag or BONSAI_BASE_URL) and an explicit window. */
export function chatStartRecord(options: ChatModelOptions, env: NodeJS.ProcessEnv = process.env): ChatStart {
  const record: ChatStart = {};
  const baseUrl = options.baseUrl ?? (options.model ? undefined : env.BONSAI_BASE_URL);
  if (baseUrl) record.baseUrl = baseUrl;
  const api = options.api ?? (options.baseUrl || options.model ? undefined : env.BONSAI_API);
  if (baseUrl && api && api !== "openai-completions") record.api = api;
  if (options.contextWindow !== undefined) record.contextWindow = options.contextWindow;
  return record;
}

/** Whether the chat must write a model change: the branch remembers another model, server or window. */
export function startDiffers(remembered: RememberedModel | undefined, model: { provider: string; id: string }, start: ChatStart): boolean {
  if (!remembered) return true;
  return (
    remembered.provider !== model.provider ||
    remembered.modelId !== model.id ||
    (start.baseUrl !== undefined && remembered.baseUrl !== start.baseUrl) ||
    (start.baseUrl !== undefined && remembered.api !== start.api) ||
    (start.contextWindow !== undefined && remembered.contextWindow !== start.contextWindow)
  );
}
