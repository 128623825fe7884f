/**
 * What each parsed input does in the chat: a message goes to the model, and each slash command
 * runs against the session (compact, move in the tree, label, fork, show the session, help,
 * quit). Work that takes a while runs through the busy status, so it gets the spinner, Escape
 * and the queue; the rest is answered at once with a line in the transcript.
 */
import type { AgentSession } from "../agent/agent-session.js";
import type { BusyStatus } from "./busy-status.js";
import { type ChatStart, rememberedModel, startDiffers } from "./chat-start.js";
import { type ChatInput, helpLines } from "./commands.js";
import { compactedBlock, compactionFailedBlock } from "./notices.js";
import { sessionInfoLines } from "./session-info.js";
import { forkSession } from "./session-switch.js";
import { pinChange, pinNotice } from "../format/pins.js";
import { pinEntry } from "../ops/pin.js";
import { summaryName } from "../ops/uncompact.js";
import type { TranscriptView } from "./transcript-view.js";
import type { TreeFlow } from "./tree-flow.js";
import { isBookkeeping } from "./tree-view.js";

export interface CommandRunnerOptions {
  session: AgentSession;
  transcript: TranscriptView;
  status: BusyStatus;
  tree: TreeFlow;
  quit: () => void;
  /** how the chat reached its model, recorded with the model so that resuming reaches it again */
  chatStart?: ChatStart;
  /** `/compact --preview`: shows the summary for the user to edit, accept or cancel (summary-review.ts) */
  review: (summary: string, signal: AbortSignal) => Promise<string | undefined>;
}

export class CommandRunner {
  /** the model is recorded in the session once, before the first message this chat sends */
  private modelRecorded = false;

  constructor(private readonly options: CommandRunnerOptions) {}

  execute(input: ChatInput): void {
    const { transcript } = this.options;
    switch (input.kind) {
      case "empty":
        return;
      case "message":
        this.sendMessage(input.text);
        return;
      case "compact":
        this.compact(input.instructions, input.preview === true);
        return;
      case "undoCompact":
        this.undoCompact(input.branchSummary === true);
        return;
      case "tree":
        this.options.tree.open();
        return;
      case "label":
        this.label(input.label);
        return;
      case "pin":
        this.pin(input.id, input.unpin);
        return;
      case "fork":
        transcript.add([forkSession(this.options.session.sessionManager)]);
        return;
      case "session":
        this.showSessionInfo();
        return;
      case "help":
        transcript.add([{ style: "notice", text: helpLines(transcript.textWidth()).join("\n") }]);
        return;
      case "quit":
        this.options.quit();
        return;
      case "unknown":
        transcript.add([{ style: "warning", text: input.hint }]);
        return;
    }
  }

  private sendMessage(text: string): void {
    const { session } = this.options;
    this.options.status.run("answering", async () => {
      if (!this.modelRecorded) this.recordModel();
      this.modelRecorded = true;
      await session.prompt(text);
    });
  }

  /** Before the first message: the model, and how it was reached, unless the branch says so already. */
  private recordModel(): void {
    const { session } = this.options;
    const model = session.model;
    const start = this.options.chatStart ?? {};
    const manager = session.sessionManager;
    const context = manager.buildSessionContext().model;
    const remembered = rememberedModel(manager.getBranch()) ?? (context ? { provider: context.provider, modelId: context.modelId } : undefined);
    // the agent already has this model: only the session learns it, with how it was reached
    if (startDiffers(remembered, model, start)) manager.appendModelChange(model.provider, model.id, undefined, start);
  }

  private compact(instructions: string | undefined, preview: boolean): void {
    const { session, transcript } = this.options;
    this.options.status.run("compacting", async () => {
      try {
        const result = await session.compact(instructions, preview ? { review: this.options.review } : {});
        transcript.redraw();
        transcript.add([compactedBlock(result, instructions)]);
      } catch (error) {
        transcript.add([compactionFailedBlock(error)]);
      }
    });
  }

  private undoCompact(branchSummary: boolean): void {
    const { session, transcript } = this.options;
    this.options.status.run("compacting", async () => {
      try {
        const result = await session.uncompact(undefined, branchSummary ? "branch_summary" : "compaction");
        transcript.redraw();
        const copies = `${result.copied.length} ${result.copied.length === 1 ? "entry" : "entries"} after it copied`;
        const what = summaryName(result.type);
        transcript.add([{ style: "success", text: `${what[0].toUpperCase()}${what.slice(1)} ${result.compactionId} undone: continuing from before it, ${copies}. The branch with it is kept (/tree).` }]);
      } catch (error) {
        transcript.add([{ style: "warning", text: error instanceof Error ? error.message : String(error) }]);
      }
    });
  }

  /** Labels the newest entry of the path that is a place to move to (not a label or checkout marker). */
  private label(text: string | undefined): void {
    const { session, transcript } = this.options;
    const manager = session.sessionManager;
    const target = manager.getBranch().findLast((e) => !isBookkeeping(e));
    if (!target) {
      transcript.add([{ style: "warning", text: "Nothing to label yet: send a message first." }]);
      return;
    }
    manager.appendLabelChange(target.id, text);
    transcript.add([{ style: "success", text: text ? `Labeled ${target.id} "${text}".` : `Label removed from ${target.id}.` }]);
  }

  /** Pins (or unpins) `id`, or the user's latest message on the path (for unpin: the latest pinned one). */
  private pin(id: string | undefined, unpin: boolean): void {
    const { session, transcript } = this.options;
    const manager = session.sessionManager;
    const change = pinChange(manager.getBranch(), id, unpin);
    if (!change.ok) {
      transcript.add([{ style: "warning", text: change.message }]);
      return;
    }
    pinEntry(manager, change.targetId, { unpin }).then(
      (result) => transcript.add([{ style: "success", text: pinNotice(result.id, result.pinned, result.changed) }]),
      (error: unknown) => transcript.add([{ style: "warning", text: error instanceof Error ? error.message : String(error) }]),
    );
  }

  private showSessionInfo(): void {
    const { session, transcript } = this.options;
    const manager = session.sessionManager;
    const model = session.model;
    const lines = sessionInfoLines({
      file: manager.getSessionFile(),
      location: manager.getLocation(),
      entries: manager.getEntries(),
      usage: session.getContextUsage(),
      model: `${model.provider}/${model.id}`,
      width: transcript.textWidth(),
    });
    transcript.add([{ style: "notice", text: lines.join("\n") }]);
  }
}
