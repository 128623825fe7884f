/**
 * The `/tree` interaction of `bonsai chat`: a selector over the conversation tree; picking an
 * entry moves there. With `branchSummary.enabled` and something left behind, it first asks
 * "No summary / Summarize / Summarize with custom prompt". Escape in the question goes back to
 * the tree, Escape in the custom prompt goes back to the question, and a summary cancelled
 * with Escape re-opens the tree.
 */
import { type Container, Editor, type SelectItem, SelectList, type TUI } from "@mariozechner/pi-tui";
import type { AgentSession } from "../agent/agent-session.js";
import { clip } from "../messages/preview.js";
import { collectEntriesForBranchSummary } from "../compaction/branch-summary.js";
import { Line } from "./components.js";
import { editorTheme, selectListTheme, ui } from "./theme.js";
import type { DisplayBlock } from "./transcript.js";
import { buildTreeView, formatTreeRow, type RowPaint } from "./tree-view.js";
import { errorText } from "../util/error-text.js";

export interface TreeFlowOptions {
  tui: TUI;
  session: AgentSession;
  /** where the selector replaces the editor */
  inputArea: Container;
  showEditor(): void;
  note(block: DisplayBlock): void;
  /** runs the summarizing move as busy work (spinner, Escape cancels) */
  runSummary(work: () => Promise<void>): void;
  /** the move happened; `editorText` is the text of a user message moved before */
  afterMove(editorText: string | undefined): void;
  /** closed without moving */
  onClosed(): void;
}

type Mode = "closed" | "tree" | "question" | "instructions";

const NO_SUMMARY = "none";
const SUMMARIZE = "summarize";
const CUSTOM = "custom";

export class TreeFlow {
  private mode: Mode = "closed";

  constructor(private readonly options: TreeFlowOptions) {}

  isOpen(): boolean {
    return this.mode !== "closed";
  }

  /** Escape that the focused component does not handle itself; true when it was used. */
  onEscape(): boolean {
    if (this.mode === "instructions" && this.target !== undefined) {
      this.askSummary(this.target);
      return true;
    }
    return false;
  }

  private target: string | undefined;

  open(): void {
    const manager = this.options.session.sessionManager;
    const view = buildTreeView(manager.getTree(), manager.getLeafId(), new Set(manager.getBranch().map((e) => e.id)));
    if (view.rows.length === 0) {
      this.options.note({ style: "notice", text: "The conversation is empty: nothing to move to yet." });
      this.close();
      return;
    }
    const width = Math.max(40, this.options.tui.terminal.columns - 4);
    const items: SelectItem[] = view.rows.map((row) => ({ value: row.id, label: formatTreeRow(row, width, PAINT) }));
    const list = new SelectList(items, Math.max(5, this.options.tui.terminal.rows - 12), selectListTheme);
    list.setSelectedIndex(Math.max(0, view.leafIndex));
    list.onSelect = (item) => this.choose(item.value);
    list.onCancel = () => this.close();
    this.show("tree", [new Line(ui.bold("Conversation tree · ↑/↓ move · Enter go there · Esc close")), list], list);
  }

  private choose(targetId: string): void {
    const manager = this.options.session.sessionManager;
    const leafId = manager.getLeafId();
    if (targetId === leafId) {
      this.options.note({ style: "notice", text: "Already there." });
      this.close();
      return;
    }
    const leftBehind = collectEntriesForBranchSummary(manager, leafId, targetId, manager.getDialect()).entries;
    if (this.options.session.settings.branchSummary.enabled && leftBehind.length > 0) this.askSummary(targetId);
    else this.move(targetId, false);
  }

  private askSummary(targetId: string): void {
    this.target = targetId;
    const list = new SelectList(
      [
        { value: NO_SUMMARY, label: "No summary" },
        { value: SUMMARIZE, label: "Summarize" },
        { value: CUSTOM, label: "Summarize with custom prompt" },
      ],
      3,
      selectListTheme,
    );
    list.onSelect = (item) => {
      if (item.value === CUSTOM) this.askInstructions(targetId);
      else this.move(targetId, item.value === SUMMARIZE);
    };
    list.onCancel = () => this.open();
    this.show("question", [new Line(ui.bold("Summarize the branch you are leaving? (Esc: back to the tree)")), list], list);
  }

  private askInstructions(targetId: string): void {
    this.target = targetId;
    const editor = new Editor(this.options.tui, editorTheme);
    editor.onSubmit = (text) => this.move(targetId, true, text.trim() || undefined);
    this.show("instructions", [new Line(ui.bold("What should the branch summary focus on? (Enter: summarize · Esc: back)")), editor], editor);
  }

  private move(targetId: string, summarize: boolean, customInstructions?: string): void {
    this.close(false);
    const { session } = this.options;
    const work = async () => {
      const result = await session.navigateTree(targetId, { summarize, customInstructions });
      if (result.aborted) {
        this.options.note({ style: "warning", text: "Branch summary cancelled; nothing was changed." });
        this.open();
        return;
      }
      if (result.cancelled) {
        this.options.note({ style: "warning", text: "The move was cancelled by a hook; nothing was changed." });
        this.options.onClosed();
        return;
      }
      this.options.afterMove(result.editorText);
      const where =
        result.editorText !== undefined
          ? `back before the message "${clip(result.editorText, 40)}" (it is in the editor: edit it and send)`
          : `to entry ${targetId}`;
      const summary = result.summaryEntry ? `; the branch left behind is summarized in entry ${result.summaryEntry.id}` : "";
      this.options.note({ style: "success", text: `✓ Moved ${where}${summary}.` });
    };
    if (summarize) {
      this.options.runSummary(work);
      return;
    }
    work().catch((error: unknown) => {
      this.options.note({ style: "error", text: `Move failed: ${errorText(error)}` });
      this.options.onClosed();
    });
  }

  private show(mode: Mode, components: { render(width: number): string[]; invalidate(): void }[], focus: SelectList | Editor): void {
    this.mode = mode;
    const area = this.options.inputArea;
    area.clear();
    for (const component of components) area.addChild(component);
    this.options.tui.setFocus(focus);
    this.options.tui.requestRender();
  }

  private close(notify = true): void {
    this.mode = "closed";
    this.target = undefined;
    this.options.showEditor();
    if (notify) this.options.onClosed();
  }
}

const PAINT: RowPaint = {
  body: (text, row) => {
    if (row.summary === "compaction") return ui.compaction(text);
    if (row.summary === "branch") return ui.branch(text);
    return row.onPath ? text : ui.dim(text);
  },
  label: ui.label,
  leaf: ui.leaf,
};
