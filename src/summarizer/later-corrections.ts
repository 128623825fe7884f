/**
 * A history summary made without a model, brought up to date with the turn that follows it. When
 * a compaction splits a turn, the history and the turn's beginning are summarized apart; a
 * correction at the start of that turn ("Correction: not 100, use 180 per batch") would leave the
 * history stating the old value as current. The items of its Goal, Constraints, In Progress and
 * Key Decisions lose the sentences the later span retires (lifecycle.ts). Only bonsai's own
 * extractive text is edited: a model's words are left as it wrote them. Pure.
 */
import { EXTRACTIVE_LABEL, SECTION } from "./extractive.js";
import { extractFacts, stillStated } from "./extractive-facts.js";
import { parseTranscript } from "./extractive-parse.js";

/** Sections whose items a later sentence can retire, and whose sentences retire them. */
const RETIRABLE: Record<string, "user" | "anyone"> = {
  [SECTION.goal]: "user",
  [SECTION.constraints]: "user",
  [SECTION.branchConstraints]: "user",
  [SECTION.inProgress]: "user",
  [SECTION.decisions]: "anyone",
};

/** An item line: its marker (bullet, checkbox, "Latest request:") and its text. */
const ITEM = /^(\s*[-*]\s+(?:\[[ xX]\]\s+)?(?:Latest request:\s+)?)(.+)$/;

export function withLaterCorrections(history: string, laterConversation: string): string {
  if (!history.startsWith(EXTRACTIVE_LABEL)) return history;
  const facts = extractFacts(parseTranscript(laterConversation));
  if (facts.said.length === 0) return history;
  let section: string | undefined;
  const out: string[] = [];
  for (const line of history.split("\n")) {
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading) section = heading[1].trim();
    const by = section === undefined ? undefined : RETIRABLE[section];
    const item = heading || !by ? undefined : ITEM.exec(line);
    if (!item || !by) {
      out.push(line);
      continue;
    }
    const kept = stillStated(item[2], facts, by);
    if (kept !== undefined) out.push(kept === item[2] ? line : `${item[1]}${kept}`);
  }
  return out.join("\n");
}
