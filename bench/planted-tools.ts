/**
 * How the agent of a planted session (bench/planted-sessions.ts) calls its tools, in the three
 * shapes agents write: pi's (`read`/`edit`/`write` with `path`, `bash` with a command line),
 * Claude Code's and OpenClaw's (`Read`/`Edit`/`Write` with `file_path`, `Bash`), and Codex's (files
 * read through the shell, changed with `apply_patch`, commands as an argument array).
 */
export interface Call {
  name: string;
  args: Record<string, unknown>;
}

export interface ToolStyle {
  read(path: string): Call;
  edit(path: string, before: string, after: string): Call;
  write(path: string, content: string): Call;
  shell(command: string): Call;
  /** what the tool answers to a change of `path` */
  changed(path: string, added: boolean): string;
}

const fileTools = (names: { read: string; edit: string; write: string; shell: string }, arg: string): ToolStyle => ({
  read: (path) => ({ name: names.read, args: { [arg]: path } }),
  edit: (path, before, after) => ({ name: names.edit, args: { [arg]: path, old_string: before, new_string: after } }),
  write: (path, content) => ({ name: names.write, args: { [arg]: path, content } }),
  shell: (command) => ({ name: names.shell, args: { command } }),
  changed: (path, added) => (added ? `Wrote 1 line to ${path}` : `Successfully replaced 1 occurrence in ${path}`),
});

const patch = (body: string) => ({ name: "apply_patch", args: { input: `*** Begin Patch\n${body}\n*** End Patch` } });

const codex: ToolStyle = {
  read: (path) => ({ name: "shell", args: { command: ["bash", "-lc", `sed -n '1,200p' ${path}`] } }),
  edit: (path, before, after) => patch(`*** Update File: ${path}\n@@\n-${before}\n+${after}`),
  write: (path, content) => patch(`*** Add File: ${path}\n${content.trimEnd().split("\n").map((line) => `+${line}`).join("\n")}`),
  shell: (command) => ({ name: "shell", args: { command: ["bash", "-lc", command] } }),
  changed: (path, added) => `Success. Updated the following files:\n${added ? "A" : "M"} ${path}`,
};

/** The styles chapters take in turn. */
export const TOOL_STYLES: readonly ToolStyle[] = [
  fileTools({ read: "read", edit: "edit", write: "write", shell: "bash" }, "path"),
  fileTools({ read: "Read", edit: "Edit", write: "Write", shell: "Bash" }, "file_path"),
  codex,
];
