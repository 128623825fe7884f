/**
 * The dependency rule of docs/ARCHITECTURE.md, checked by dependency-cruiser on the real import
 * graph of src/: every folder imports only folders of lower layers (or its own), no module takes
 * part in a cycle, and the format layer does no I/O. There is no list of exceptions.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { ROOT } from "./helpers/cli.js";

/**
 * Lowest first. Folders in one row are peers and must not import each other. `exports/` holds the
 * package's subpath entries (bonsai-sessions/stores, …), which, like src/index.ts, may import any layer.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["util"],
  ["format"],
  ["storage"],
  ["session"],
  ["messages", "prompts"],
  ["summarizer"],
  ["compaction"],
  ["config"],
  ["ops"],
  ["agent"],
  ["chat", "server", "view"],
  ["cli"],
  ["exports"],
];

function rules(): IForbiddenRuleType[] {
  const forbidden: IForbiddenRuleType[] = [
    { name: "no-cycle", severity: "error", from: {}, to: { circular: true } },
    { name: "format-is-pure", severity: "error", from: { path: "^src/format/" }, to: { path: "^(node:)?(fs|fs/promises|net|http|child_process)$" } },
    // adapters such as packages/pi-bonsai build on the library; the library never knows them
    { name: "library-never-imports-adapters", severity: "error", from: { path: "^src/" }, to: { path: "^packages/" } },
  ];
  LAYERS.forEach((row, level) => {
    const notBelow = LAYERS.slice(level).flat();
    for (const folder of row) {
      const banned = notBelow.filter((other) => other !== folder);
      forbidden.push({
        name: `${folder}-imports-only-lower-layers`,
        severity: "error",
        from: { path: `^src/${folder}/` },
        to: { path: `^src/(${banned.join("|")})/` },
      });
    }
  });
  return forbidden;
}

describe("architecture", () => {
  it("every folder of src/ has a place in the layers", () => {
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    assert.deepEqual(folders, LAYERS.flat().sort());
  });

  it("imports go only downwards, and no module is in a cycle", async () => {
    const result = await cruise(
      ["src"],
      {
        baseDir: ROOT,
        validate: true,
        ruleSet: { forbidden: rules() },
        tsPreCompilationDeps: true,
        doNotFollow: { path: "node_modules" },
        exclude: { path: "^src/index\\.ts$" },
      },
      { extensions: [".ts", ".js"] },
      { tsConfig: { fileName: join(ROOT, "tsconfig.json") } },
    );
    const output = result.output as { modules: { source: string }[]; summary: { violations: { from: string; to: string; rule: { name: string } }[] } };
    assert.ok(output.modules.length > 90, `cruised ${output.modules.length} modules`);
    const violations = output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    assert.deepEqual(violations, []);
  });
});
