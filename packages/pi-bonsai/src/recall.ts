/**
 * history_search and history_read as pi tools: the agent in pi can look back past a compaction
 * (agent/recall.ts), reading pi's session through the context each tool call gets. Each summary
 * bonsai writes then ends with a note that the tools exist (RECALL_NOTE, compaction.ts).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type RecallSource, recallTools } from "../../../src/agent/recall.js";
import type { SessionEntry } from "../../../src/format/entry-types.js";

/** pi's session manager, read the way the tools read a session. */
export const piRecallSource = (ctx: Pick<ExtensionContext, "sessionManager">): RecallSource => ({
  getEntries: () => ctx.sessionManager.getEntries() as unknown as SessionEntry[],
  getBranch: (leafId) => ctx.sessionManager.getBranch(leafId) as unknown as SessionEntry[],
  getLocation: () => ctx.sessionManager.getSessionFile(),
});

/** What pi 1.x adds to its system prompt's tool list for each tool (pi 0.73.1 ignores it). */
const SNIPPETS: Record<string, string> = {
  history_search: "history_search: find earlier parts of this session, including what a compaction summarized away",
  history_read: "history_read: read earlier entries of this session word for word, by id",
};

export function registerRecallTools(pi: ExtensionAPI): void {
  // the definitions (names, schemas, descriptions) once; each call runs over that call's session
  for (const tool of recallTools(piRecallSource({ sessionManager: undefined as never }))) {
    pi.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      promptSnippet: SNIPPETS[tool.name],
      parameters: tool.parameters,
      execute: (toolCallId, params, signal, onUpdate, ctx) => {
        const own = recallTools(piRecallSource(ctx)).find((t) => t.name === tool.name);
        return own!.execute(toolCallId, params as never, signal, onUpdate);
      },
    });
  }
}
