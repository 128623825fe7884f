/**
 * `/pin [id]` and `/unpin [id]` in pi: the same pin entries `bonsai pin` and the chat append
 * (format/pins.ts, a `bonsai.pin` custom entry pi keeps out of the model's context), written
 * through pi's own appendEntry so pi stays the file's only writer. Every later compaction bonsai
 * makes in pi carries the pinned text verbatim.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { SessionEntry } from "../../../src/format/entry-types.js";
import { PIN_CUSTOM_TYPE, type PinData, pinChange, pinNotice } from "../../../src/format/pins.js";

type Notify = (ctx: ExtensionContext, message: string, level: "info" | "warning" | "error") => void;

export function registerPinCommands(pi: ExtensionAPI, notify: Notify): void {
  for (const unpin of [false, true]) {
    pi.registerCommand(unpin ? "unpin" : "pin", {
      description: unpin
        ? "bonsai: unpin your latest pinned message (or the entry id given)"
        : "bonsai: pin your latest message (or the entry id given): every later compaction carries it verbatim",
      handler: async (args, ctx) => {
        const change = pinChange(ctx.sessionManager.getBranch() as unknown as SessionEntry[], args.trim() || undefined, unpin);
        if (!change.ok) {
          notify(ctx, change.message, "warning");
          return;
        }
        if (change.changed) pi.appendEntry<PinData>(PIN_CUSTOM_TYPE, { targetId: change.targetId, pinned: change.pinned });
        notify(ctx, pinNotice(change.targetId, change.pinned, change.changed), "info");
      },
    });
  }
}
