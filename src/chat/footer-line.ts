/**
 * The footer component: model, how full the context is, and where the session is, fitted to
 * the width by footer.ts. It is drawn on every frame (the spinner animates), but the context
 * size only changes when the context does, so it is estimated again only then.
 */
import { untrusted } from "../util/terminal-safe.js";
import { homedir } from "node:os";
import type { AgentSession } from "../agent/agent-session.js";
import { Line } from "./components.js";
import { formatFooter } from "./footer.js";
import { ui } from "./theme.js";

type Usage = ReturnType<AgentSession["getContextUsage"]>;

export function footerLine(session: AgentSession): Line {
  let memo: { key: { messages: readonly unknown[]; length: number; leaf: string | null }; usage: Usage } | undefined;
  const usage = (): Usage => {
    const messages = session.messages;
    const key = { messages, length: messages.length, leaf: session.sessionManager.getLeafId() };
    if (!memo || memo.key.messages !== key.messages || memo.key.length !== key.length || memo.key.leaf !== key.leaf) {
      memo = { key, usage: session.getContextUsage() };
    }
    return memo.usage;
  };
  return new Line((width) => {
    const model = session.model;
    const input = { model: `${model.provider}/${model.id}`, usage: usage(), location: session.sessionManager.getLocation(), home: homedir() };
    // the model and the location may come from a session or a file name: nothing in them may drive the terminal
    return ui.dim(untrusted(formatFooter(input, width)));
  });
}
