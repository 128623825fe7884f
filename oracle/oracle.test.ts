/**
 * The real agents are the oracle (issue 24): for every generated case of each dialect, the
 * context and leaf bonsai reads equal those the agent that writes the dialect builds itself, at
 * every leaf. `npm run test:oracle`; the agents come from npm (`npm run oracle:install`).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../src/session/manager.js";
import { AGENTS, type AgentContext, askAgent, type ContextRequest, missing } from "./agents.js";
import { entryIds, type OracleCase, oracleCases } from "./cases.js";
import { comparable } from "./compare.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-oracle-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function writeCase(c: OracleCase): string {
  const file = join(dir, `${c.name}.jsonl`);
  writeFileSync(file, `${c.lines.join("\n")}\n${c.tornTail ?? ""}`);
  return file;
}

/** bonsai's context for a request, in the shape the agents report. */
function bonsaiContext(request: ContextRequest): AgentContext {
  const session = SessionManager.open(request.file, { readOnly: true });
  try {
    const leafId = request.leaf === undefined ? session.getLeafId() : request.leaf;
    return { leafId, ...session.buildSessionContext(leafId) };
  } finally {
    void session.close();
  }
}

const requestsOf = (c: OracleCase, file: string): ContextRequest[] => [{ file }, { file, leaf: null }, ...entryIds(c).map((leaf) => ({ file, leaf }))];

for (const agent of AGENTS) {
  describe(agent.name, () => {
    const cases = oracleCases().filter((c) => agent.dialects.includes(c.dialect));
    it(`reads every case as bonsai does, at every leaf (${cases.map((c) => c.name).join(", ")})`, () => {
      const problem = missing(agent);
      assert.equal(problem, undefined, problem);
      const requests = cases.flatMap((c) => requestsOf(c, writeCase(c)));
      const answers = askAgent(agent, requests);
      const differences: string[] = [];
      for (const [i, request] of requests.entries()) {
        const theirs = answers[i];
        const where = `${request.file.split("/").at(-1)} at ${request.leaf === undefined ? "its leaf" : `leaf ${request.leaf}`}`;
        if ("error" in theirs) {
          differences.push(`${where}: ${agent.name} failed: ${theirs.error}`);
          continue;
        }
        try {
          assert.deepEqual(comparable(bonsaiContext(request)), comparable(theirs));
        } catch (error) {
          differences.push(`${where}: ${(error as Error).message}`);
        }
      }
      assert.equal(differences.length, 0, `${differences.length} of ${requests.length} differ:\n${differences.join("\n\n")}`);
    });
  });
}
