/**
 * The parts of `bonsai eval`'s score that its own extractors cannot fool: the summarizer's raw
 * text (without the file lists and the guard's sections bonsai appends, so a summary with no facts
 * of its own scores near 0 however much the guard adds), and what a summary states as current that
 * no longer holds (negative needles from a facts file: a corrected requirement, a reversed
 * decision, a fixed error). Pure functions.
 */
import { stripFileOperations } from "../compaction/file-ops.js";
import { normalizeForMatch } from "../summarizer/coverage.js";
import { splitGuardSections } from "../summarizer/summary-guard.js";
import { anyHeading } from "../summarizer/guard-language.js";
import { FACT_KINDS, type FactKind } from "./eval-facts.js";

/** Something that must not be stated as current once the conversation is past `after` (always, without it). */
export interface NegativeFact {
  text: string;
  /** the entry from which on it no longer holds (the correction, the fix) */
  after?: string;
}

/** The summarizer's own text: the summary less the file lists and the guard's sections. */
export function rawSummary(summary: string): string {
  return splitGuardSections(stripFileOperations(summary)).body;
}

/** Words on a line that tell a value as history, not as what holds now. */
const AS_HISTORY = new RegExp(
  `(?<![\\p{L}])(?:${[
    "not|no longer|instead of|rather than|replaced|superseded|previously|formerly|earlier|was|were|fixed|resolved|dropped|abandoned|reverted",
    // words that are also English ("non-null", "plus", "era", "war") are left out
    "non(?= )|non più|invece di|piuttosto che|sostituit\\p{L}*|corrett\\p{L}*|risolt\\p{L}*|erano",
    "nicht|nicht mehr|statt|anstatt|ersetzt|vorher|früher|behoben|gelöst|waren",
    "ne \\p{L}+ pas|ne plus|au lieu de|plutôt que|remplacé\\p{L}*|corrigé\\p{L}*|était",
    "ya no|en lugar de|en vez de|reemplazad\\p{L}*|corregid\\p{L}*|eran",
  ].join("|")})(?![\\p{L}])`,
  "iu",
);

/**
 * The negative facts `summary` states as current: a line that holds the text and no word that
 * tells it as history. The verbatim requests section is the user's words quoted in order, a
 * record of what was asked, and is not read.
 */
export function wronglyStated(summary: string, negatives: readonly NegativeFact[]): NegativeFact[] {
  const at = Math.min(...anyHeading("requests").map((heading) => summary.indexOf(`${heading}\n`)).map((i) => (i < 0 ? Number.POSITIVE_INFINITY : i)));
  const body = Number.isFinite(at) ? summary.slice(0, at) : summary;
  const lines = body.split("\n").map((line) => ({ line, normalized: normalizeForMatch(line) }));
  return negatives.filter((fact) => {
    const needle = normalizeForMatch(fact.text);
    return needle !== "" && lines.some(({ line, normalized }) => normalized.includes(needle) && !AS_HISTORY.test(line));
  });
}

/** The negatives that apply at a cut: those with no `after`, or whose entry comes before the cut. */
export function negativesAtCut(index: ReadonlyMap<string, number>, negatives: readonly NegativeFact[], cut: number): NegativeFact[] {
  return negatives.filter((fact) => {
    if (fact.after === undefined) return true;
    const at = index.get(fact.after);
    return at !== undefined && at < cut;
  });
}

/** A facts file for `bonsai eval --facts`: facts to keep, and what must not be stated as current. */
export interface FactsFile {
  facts: { kind: FactKind; text: string; entryId: string; supersededBy?: string }[];
  mustNotState: NegativeFact[];
}

/**
 * Reads a facts file, written independently of the summarizer:
 * `{"facts": [{"kind", "text", "entryId", "supersededBy"?}], "mustNotState": [{"text", "after"?}]}`.
 * Throws one line naming the file and the field that is wrong.
 */
export function parseFactsFile(text: string, where: string): FactsFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const fail = (field: string, what: string): never => {
    throw new Error(`${where}: ${field} ${what}`);
  };
  if (typeof data !== "object" || data === null || Array.isArray(data)) fail("the file", "must be an object with `facts` and `mustNotState`");
  const { facts = [], mustNotState = [] } = data as { facts?: unknown; mustNotState?: unknown };
  if (!Array.isArray(facts)) fail("facts", "must be an array");
  if (!Array.isArray(mustNotState)) fail("mustNotState", "must be an array");
  const str = (value: unknown, field: string, optional = false): string | undefined => {
    if (value === undefined && optional) return undefined;
    if (typeof value !== "string" || value.trim() === "") fail(field, "must be a non-empty string");
    return value as string;
  };
  const parsedFacts = (facts as unknown[]).map((fact, i) => {
    if (typeof fact !== "object" || fact === null) fail(`facts[${i}]`, "must be an object");
    const f = fact as Record<string, unknown>;
    const kind = str(f.kind, `facts[${i}].kind`) as FactKind;
    if (!FACT_KINDS.includes(kind)) fail(`facts[${i}].kind`, `must be one of ${FACT_KINDS.join(", ")}`);
    const supersededBy = str(f.supersededBy, `facts[${i}].supersededBy`, true);
    return { kind, text: str(f.text, `facts[${i}].text`) as string, entryId: str(f.entryId, `facts[${i}].entryId`) as string, ...(supersededBy ? { supersededBy } : {}) };
  });
  const parsedNegatives = (mustNotState as unknown[]).map((fact, i) => {
    if (typeof fact !== "object" || fact === null) fail(`mustNotState[${i}]`, "must be an object");
    const f = fact as Record<string, unknown>;
    const after = str(f.after, `mustNotState[${i}].after`, true);
    return { text: str(f.text, `mustNotState[${i}].text`) as string, ...(after ? { after } : {}) };
  });
  return { facts: parsedFacts, mustNotState: parsedNegatives };
}
