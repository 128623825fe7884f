/**
 * Text edited in the user's editor, as `git commit` does it: $VISUAL, else $EDITOR, else vi, run
 * through the shell (so "code --wait" works) on a private temporary file. The editor's exit code
 * decides: 0 accepts what it saved, anything else cancels.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What the user saved, or undefined when the editor exited with a failure (cancel). */
export function editText(text: string, name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-edit-"));
  const file = join(dir, name);
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const editor = env.VISUAL?.trim() || env.EDITOR?.trim() || "vi";
    const run = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit", env });
    if (run.error) throw new Error(`could not start the editor "${editor}": ${run.error.message}`);
    return run.status === 0 ? readFileSync(file, "utf8") : undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
