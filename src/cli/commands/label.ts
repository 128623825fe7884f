/** `bonsai label FILE ID [LABEL]`: sets a label on an entry, or clears it. */
import type { Command } from "commander";
import { openWithStableIds } from "../open-session.js";
import { colors, print, printJson, resolveEntryId, runAction } from "../output.js";

export interface LabelResult {
  id: string;
  label: string | null;
  previous: string | null;
  /** false when the entry already had this label (or had none to clear): nothing was written */
  changed: boolean;
  /** the label entry appended, when one was */
  labelEntryId: string | null;
}

/**
 * Opens the file for writing (taking the lock), appends one label entry if the label changes,
 * and closes. Older formats are refused rather than migrated behind the user's back.
 */
export async function setLabel(path: string, id: string, label: string | undefined): Promise<LabelResult> {
  const session = await openWithStableIds(path, "to label");
  try {
    const target = resolveEntryId(session, id);
    const previous = session.getLabel(target) ?? null;
    const next = label?.trim() ? label.trim() : null;
    if (previous === next) return { id: target, label: next, previous, changed: false, labelEntryId: null };
    const labelEntryId = session.appendLabelChange(target, next ?? undefined);
    await session.flush();
    return { id: target, label: next, previous, changed: true, labelEntryId };
  } finally {
    await session.close();
  }
}

export function register(program: Command): void {
  program
    .command("label")
    .description("set a label on an entry, or clear it when LABEL is left out")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .argument("<id>", "entry id (unique prefix accepted)")
    .argument("[label]", "the label; leave out to clear")
    .option("--json", "print stable JSON: {id, label, previous, changed, labelEntryId}")
    .action(
      runAction(async (path: string, id: string, label: string | undefined, options: { json?: boolean }) => {
        const result = await setLabel(path, id, label);
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        if (!result.changed) {
          print(
            result.label === null
              ? `${result.id} has no label; nothing changed`
              : `${result.id} is already labeled ${c.cyan(`[${result.label}]`)}; nothing changed`,
          );
        } else if (result.label === null) {
          print(`cleared label ${c.cyan(`[${result.previous}]`)} of ${result.id}`);
        } else {
          print(
            `labeled ${result.id} ${c.cyan(`[${result.label}]`)}` +
              (result.previous !== null ? ` (was [${result.previous}])` : ""),
          );
        }
      }),
    );
}
