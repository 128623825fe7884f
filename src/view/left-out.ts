/**
 * An entry whose body a bounded export left out (bound.ts keeps the newest bodies when not all
 * fit) says so where it stands in the page. The note is made in the page, so it costs the export
 * no bytes (the Markdown says it once, at the top). Pure.
 */
import type { Block } from "./blocks.js";
import type { ViewModel } from "./model.js";

const LEFT_OUT: Block = { kind: "meta", text: "body left out of this export (its --max-bytes bound)" };

/** The blocks of entry `id` in an export: its body, or the note when the bound left it out. */
export function exportedBody(model: Pick<ViewModel, "bodies" | "omitted">, id: string): Block[] {
  return model.bodies?.[id] ?? (model.omitted && model.omitted.blocks > 0 ? [LEFT_OUT] : []);
}
