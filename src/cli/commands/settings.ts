/** `bonsai settings`: the settings in effect here, each with where it came from (config/settings.ts). */
import type { Command } from "commander";
import { effectiveSettings } from "../../config/settings.js";
import { colors, print, printJson, runAction, warn } from "../output.js";

const shown = (value: unknown) => (value === undefined ? "(unset)" : JSON.stringify(value));

export function register(program: Command): void {
  program
    .command("settings")
    .description("show the settings in effect in this folder and where each comes from (a default, ~/.bonsai/settings.json or .bonsai/settings.json)")
    .option("--json", "print stable JSON: {values: [{key, value, source}], files: [{path, exists}]}")
    .action(
      runAction(async (options: { json?: boolean }) => {
        const { values, files } = effectiveSettings({ onWarning: warn });
        if (options.json) {
          printJson({ values: values.map((v) => ({ ...v, value: v.value ?? null })), files });
          return;
        }
        const c = colors();
        const width = Math.max(...values.map((v) => v.key.length));
        const valueWidth = Math.min(40, Math.max(...values.map((v) => shown(v.value).length)));
        const lines = files.map((f) => `${c.dim("file")} ${f.path}${f.exists ? "" : c.dim(" (none)")}`);
        lines.push("");
        for (const v of values) {
          const source = v.source === "default" ? c.dim("default") : c.cyan(v.source);
          lines.push(`${v.key.padEnd(width)}  ${shown(v.value).padEnd(valueWidth)}  ${source}`);
        }
        print(lines.join("\n"));
      }),
    );
}
