/**
 * Which tool calls read or change a file, for sessions written by any agent: pi and oh-my-pi
 * (`read`/`write`/`edit` with `path`), OpenClaw and Claude-Code-style tools (`Read`, `Write`,
 * `Edit`, `MultiEdit` with `file_path`), editor tools with a `command` argument
 * (`str_replace_editor`: view, create, str_replace, insert). Used by the file lists of
 * compaction (compaction/file-ops.ts) and by the extractive summarizer, so both see the same
 * files. Pure functions.
 */

export type FileToolKind = "read" | "write" | "edit";

const BY_NAME: Record<string, FileToolKind> = {
  read: "read",
  view: "read",
  read_file: "read",
  readfile: "read",
  write: "write",
  create: "write",
  write_file: "write",
  writefile: "write",
  create_file: "write",
  edit: "edit",
  multiedit: "edit",
  multi_edit: "edit",
  edit_file: "edit",
  editfile: "edit",
  str_replace: "edit",
  replace: "edit",
  notebookedit: "edit",
  notebook_edit: "edit",
};

/** Tools whose `command` argument says what they do (Anthropic's text editor tool and its clones). */
const EDITOR_TOOLS = new Set(["str_replace_editor", "str_replace_based_edit_tool", "text_editor"]);
const EDITOR_COMMANDS: Record<string, FileToolKind> = {
  view: "read",
  create: "write",
  str_replace: "edit",
  insert: "edit",
  undo_edit: "edit",
};

/** Argument names that carry the file, in the order they are looked at (`path` first, as pi writes it). */
export const PATH_ARGUMENTS = ["path", "file_path", "filePath", "filename", "notebook_path"] as const;

/**
 * What a call does to a file, or undefined for other tools. The reference's own names (`read`,
 * `write`, `edit`) are matched exactly as before; other agents' names case-insensitively.
 */
export function fileToolKind(name: string, args: Readonly<Record<string, unknown>> | undefined): FileToolKind | undefined {
  const lower = name.toLowerCase();
  if (EDITOR_TOOLS.has(lower)) {
    const command = args?.command;
    return typeof command === "string" ? EDITOR_COMMANDS[command] : undefined;
  }
  return Object.hasOwn(BY_NAME, lower) ? BY_NAME[lower] : undefined;
}

/** The file a call names: the first non-empty string among PATH_ARGUMENTS, verbatim. */
export function fileToolPath(args: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!args || typeof args !== "object") return undefined;
  for (const key of PATH_ARGUMENTS) {
    const value = args[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return undefined;
}

/** Kind and path of a file tool call, or undefined when the call is not one (or names no file). */
export function fileToolCall(
  name: string,
  args: Readonly<Record<string, unknown>> | undefined,
): { kind: FileToolKind; path: string } | undefined {
  const kind = fileToolKind(name, args);
  if (!kind) return undefined;
  const path = fileToolPath(args);
  return path ? { kind, path } : undefined;
}

/** Tools that take a whole patch in the `*** Update File: path` format (Codex's `apply_patch`, OpenCode's `patch`). */
const PATCH_TOOLS = new Set(["apply_patch", "applypatch", "patch"]);
/** Argument names that carry such a patch. */
const PATCH_ARGUMENTS = ["input", "patch", "patchText", "patch_text", "diff"] as const;
const PATCH_FILE = /^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$/gm;

/** The files a patch in the `*** Begin Patch` format changes: added ones written, updated, moved and deleted ones edited. */
export function patchedFiles(patch: string): { kind: FileToolKind; path: string }[] {
  const files: { kind: FileToolKind; path: string }[] = [];
  for (const m of patch.matchAll(PATCH_FILE)) {
    const path = m[2] ?? m[3];
    const kind: FileToolKind = m[1] === "Add" ? "write" : "edit";
    if (path && !files.some((f) => f.path === path)) files.push({ kind, path });
  }
  return files;
}

/** A shell tool's command as one line: a string as is; an argument array (Codex's `shell`) as what it runs. */
export function commandText(command: unknown): string | undefined {
  if (typeof command === "string") return command;
  if (!Array.isArray(command) || !command.every((word) => typeof word === "string")) return undefined;
  const words = command as string[];
  // ["bash", "-lc", "npm test"]: the script is the command
  if (words.length === 3 && /^(?:ba|z|da)?sh$/.test(words[0].replace(/^.*\//, "")) && /^-l?c$/.test(words[1])) return words[2];
  return words.join(" ");
}

/**
 * Every file a call reads or changes: one for the file tools above, each file of a patch for the
 * patch tools, and the patch of a shell call that runs `apply_patch` (Codex writes both).
 */
export function fileToolCalls(name: string, args: Readonly<Record<string, unknown>> | undefined): { kind: FileToolKind; path: string }[] {
  if (PATCH_TOOLS.has(name.toLowerCase())) {
    const patch = PATCH_ARGUMENTS.map((key) => args?.[key]).find((value): value is string => typeof value === "string");
    return patch ? patchedFiles(patch) : [];
  }
  const command = args?.command;
  if (Array.isArray(command) && command[0] === "apply_patch" && typeof command[1] === "string") return patchedFiles(command[1]);
  const one = fileToolCall(name, args);
  return one ? [one] : [];
}
