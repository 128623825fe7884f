/**
 * Which files a stretch of conversation read and changed, from the assistant's file tool calls:
 * pi's `read`, `write` and `edit` with `path`, and other agents' names and arguments
 * (summarizer/file-tools.ts). Summaries carry these lists so a compacted session still knows
 * what it touched.
 */
import type { AgentMessage } from "../format/message-types.js";
import { type FileLists, isFromExtension } from "../format/entry-types.js";
import { fileToolCalls } from "../summarizer/file-tools.js";

export interface FileOps {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOps {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

const TOOL_KIND = { read: "read", write: "written", edit: "edited" } as const satisfies Record<string, keyof FileOps>;

/** Adds the paths of one message's file tool calls. Paths are kept verbatim. */
export function extractFileOpsFromMessage(message: AgentMessage, ops: FileOps): void {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return;
  for (const block of message.content) {
    if (block?.type !== "toolCall") continue;
    if (typeof block.name !== "string") continue;
    for (const call of fileToolCalls(block.name, block.arguments as Record<string, unknown> | undefined)) ops[TOOL_KIND[call.kind]].add(call.path);
  }
}

/** Seeds file operations from an earlier summary's lists (modified files count as edited). */
/**
 * Whether a summary entry's details are file lists to carry forward: those of the agent's own
 * summaries, and of bonsai's wherever it wrote them. An extension's details are its own business
 * (pi and oh-my-pi do not read them either), but pi marks every compaction pi-bonsai makes as an
 * extension's (`fromHook`), and bonsai's details carry a `bonsai` record that says whose they are.
 */
export function carriesFileLists(entry: { fromHook?: boolean; fromExtension?: boolean; details?: unknown }): boolean {
  if (!isFromExtension(entry)) return true;
  const details = entry.details as { bonsai?: unknown } | undefined;
  return typeof details?.bonsai === "object" && details.bonsai !== null;
}

export function addFileLists(ops: FileOps, lists: Partial<FileLists> | undefined): void {
  if (!lists) return;
  if (Array.isArray(lists.readFiles)) for (const f of lists.readFiles) if (typeof f === "string") ops.read.add(f);
  if (Array.isArray(lists.modifiedFiles)) for (const f of lists.modifiedFiles) if (typeof f === "string") ops.edited.add(f);
}

/** Modified = written or edited; read = read and not modified. Both sorted. */
export function computeFileLists(ops: FileOps): FileLists {
  const modified = new Set([...ops.edited, ...ops.written]);
  const readFiles = [...ops.read].filter((f) => !modified.has(f)).sort();
  return { readFiles, modifiedFiles: [...modified].sort() };
}

/**
 * The block appended to a summary: a blank line, `<read-files>` one path per line, a blank line,
 * `<modified-files>`. Empty lists are left out; nothing at all when both are empty.
 */
export function formatFileOperations(readFiles: readonly string[], modifiedFiles: readonly string[]): string {
  const sections: string[] = [];
  if (readFiles.length > 0) sections.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
  if (modifiedFiles.length > 0) sections.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
  return sections.length === 0 ? "" : `\n\n${sections.join("\n\n")}`;
}

/**
 * Removes the trailing file-operation tags from a stored summary, so a summary that is carried
 * over (or handed to the model as the previous summary) does not get a second set appended.
 * Reads bonsai's and pi's layout and oh-my-pi's (tags glued to the text and to each other).
 */
export function stripFileOperations(summary: string): string {
  let text = summary.trimEnd();
  let stripped = false;
  for (const tag of ["modified-files", "read-files"]) {
    if (!text.endsWith(`</${tag}>`)) continue;
    const open = text.lastIndexOf(`<${tag}>`);
    if (open < 0) continue;
    text = text.slice(0, open).trimEnd();
    stripped = true;
  }
  return stripped ? text : summary;
}
