/**
 * Issue 27: shell completion. The script is written from the program's own commands and flags;
 * bash runs it here for real: the first word completes to commands, a flag to that command's
 * flags, anything else to file names.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { buildProgram } from "../../src/cli/program.js";
import { commandWords, completionScript } from "../../src/cli/completion.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
const script = join(temp.dir, "bonsai.bash");
writeFileSync(script, completionScript(buildProgram(), "bash"));

/** What bash completes for the words typed so far (the last one being completed). */
function complete(...words: string[]): string[] {
  const line = `source ${script}; cd ${temp.dir}; COMP_WORDS=(bonsai ${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length}; _bonsai; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync("bash", ["-c", line], { encoding: "utf8" }).split("\n").filter(Boolean).sort();
}

describe("bonsai completion", () => {
  it("bash: commands first, then the command's own flags, then files", () => {
    assert.deepEqual(complete("co"), ["compact", "completion", "context", "copy"]);
    assert.deepEqual(complete("prune", "--re"), ["--restore"]);
    assert.deepEqual(complete("info", "--"), ["--help", "--json"]);
    writeFileSync(join(temp.dir, "session-a.jsonl"), "");
    assert.deepEqual(complete("info", "sess"), ["session-a.jsonl"]);
  });

  it("every command and flag of the program is in each shell's script, and nothing else", () => {
    const program = buildProgram();
    const words = commandWords(program);
    assert.ok(words.some((c) => c.name === "settings") && words.length === program.commands.length);
    for (const shell of ["bash", "zsh", "fish"] as const) {
      const text = completionScript(program, shell);
      for (const c of words) {
        assert.match(text, new RegExp(`\\b${c.name}\\b`), `${shell}: ${c.name}`);
        for (const f of c.flags) assert.ok(text.includes(shell === "fish" ? `-l ${f.long.slice(2)}` : f.long), `${shell}: ${c.name} ${f.long}`);
      }
    }
  });
});
