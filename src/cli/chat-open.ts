/**
 * The order in which `bonsai chat` settles its model and its session. A new chat resolves the
 * model first, so a missing one fails before any session exists. A resumed one (--continue,
 * --session) opens the session first: the model it remembers (chat/chat-start.ts) completes the
 * flags, and the session is closed again when no model comes of it.
 */
import type { ChatStart } from "../chat/chat-start.js";
import type { ChatModel, ChatModelOptions } from "../chat/model.js";
import type { SessionManager } from "../session/manager.js";
import { CliError } from "./output.js";

export interface ChatOpenOptions extends ChatModelOptions {
  session?: string;
  continue?: boolean;
}

export interface OpenedChat extends ChatModel {
  manager: SessionManager;
  resumed: boolean;
  chatStart: ChatStart;
}

export async function openChat(options: ChatOpenOptions, cwd: string, onWarning: (message: string) => void): Promise<OpenedChat> {
  const [{ resolveChatModel }, { openChatSession }, { chatStartRecord, rememberedModel, resumedModelOptions }] = await Promise.all([
    import("../chat/model.js"),
    import("../chat/session-files.js"),
    import("../chat/chat-start.js"),
  ]);
  const resuming = options.session !== undefined || options.continue === true;
  const early = resuming ? undefined : await resolveChatModel(options);
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new CliError("bonsai chat needs an interactive terminal: run it in a terminal, not through a pipe");
  }
  const { session: manager, resumed } = await openChatSession({ cwd, session: options.session, continue: options.continue, onWarning });
  try {
    const modelOptions = resuming ? resumedModelOptions(options, rememberedModel(manager.getBranch())) : options;
    const { model, apiKey } = early ?? (await resolveChatModel(modelOptions));
    return { manager, resumed, model, apiKey, chatStart: chatStartRecord(modelOptions) };
  } catch (error) {
    await manager.close();
    throw error;
  }
}
