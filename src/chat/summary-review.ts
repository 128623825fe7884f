/**
 * `/compact --preview`: the summary is put in the chat's own editor before anything is written.
 * Enter writes what the editor holds (trimmed, as the editor submits it; an emptied editor writes
 * nothing); Escape, which stops the running compaction, cancels. Whatever the user was typing
 * comes back afterwards, pasted text included.
 */
import type { Editor, TUI } from "@mariozechner/pi-tui";
import type { DisplayBlock } from "./transcript.js";

export interface SummaryReviewOptions {
  tui: TUI;
  editor: Editor;
  note: (blocks: readonly DisplayBlock[]) => void;
}

export const REVIEW_NOTE =
  "The summary is in the editor: change what you like, then Enter writes it as the compaction (Shift+Enter or \\ then Enter for a new line); Escape cancels and writes nothing.";

/** A review for AgentSession.compact: resolves with the text the user submitted, or undefined. */
export function reviewInEditor({ tui, editor, note }: SummaryReviewOptions) {
  return (summary: string, signal: AbortSignal): Promise<string | undefined> =>
    new Promise((resolve) => {
      const draft = editor.getExpandedText(); // a paste marker would not expand once the editor is reset
      const submit = editor.onSubmit;
      const finish = (text: string | undefined) => {
        signal.removeEventListener("abort", cancel);
        editor.onSubmit = submit;
        editor.setText(draft);
        tui.requestRender();
        resolve(text);
      };
      const cancel = () => finish(undefined);
      if (signal.aborted) return cancel();
      signal.addEventListener("abort", cancel, { once: true });
      editor.onSubmit = (text) => finish(text.trim() === "" ? undefined : text);
      editor.setText(summary);
      note([{ style: "notice", text: REVIEW_NOTE }]);
      tui.setFocus(editor);
      tui.requestRender();
    });
}
