/**
 * What still holds at the end of a span: a requirement the user corrected later, or a decision
 * reversed later, is retired (it may be told as history, never as current); an error is open until
 * a later run of the same kind of check passes. The extractive summarizer, the coverage check and
 * the merge of an older summary all ask these functions, so they agree. Pure functions.
 */

/** The kinds of checks whose later success clears an earlier failure of another command of that kind. */
export type CheckKind = "test" | "typecheck" | "lint" | "build";

const KINDS: readonly [CheckKind, RegExp][] = [
  ["test", /(?<![\w-])(?:test|tests|test:\S+|vitest|jest|mocha|ava|pytest|rspec|phpunit|ctest|playwright|cypress)(?![\w-])|node --test|go test|cargo test/],
  ["typecheck", /(?<![\w-])(?:tsc|typecheck|type-check|check-types|mypy|pyright|vue-tsc)(?![\w-])/],
  ["lint", /(?<![\w-])(?:lint|eslint|biome|ruff|flake8|pylint|clippy|golangci-lint|rubocop|stylelint|oxlint)(?![\w-])/],
  ["build", /(?<![\w-])(?:build|compile|webpack|rollup|esbuild)(?![\w-])/],
];

/** The kind of check a command line runs (`npx vitest run` and `npm test` are both "test"), if any. */
export function checkKind(command: string): CheckKind | undefined {
  const text = command.toLowerCase();
  return KINDS.find(([, pattern]) => pattern.test(text))?.[0];
}

/** Programs that run checks: `git commit -m "add tests"` names a kind of check but runs none. */
const CHECK_RUNNER =
  /^(?:npm|npx|pnpm|yarn|bun|bunx|node|deno|tsc|vitest|jest|mocha|ava|pytest|python3?|go|cargo|make|eslint|biome|ruff|flake8|pylint|mypy|pyright|rspec|phpunit|ctest|playwright|cypress|gradle|mvn|dotnet|uv|poetry)(?![\w-])/;

/** The kind of check a command runs when its program is one that runs checks (after any leading `cd …`). */
export function checkRunKind(command: string): CheckKind | undefined {
  const bare = command.trim().replace(/^(?:cd\s+\S+\s*(?:&&|;)\s*)+/, "");
  return CHECK_RUNNER.test(bare) ? checkKind(bare) : undefined;
}

/** Words that follow "not" or "instead of" without naming what was replaced. */
const STOPWORDS = new Set(
  [
    "a an the any all this that these those it its them they to be yet now just only so too very really sure always never more much many some one ever even again here there what which who how why when where if or and but because working work done needed necessary necessarily needed possible ready used sure",
    // the articles and determiners of the other languages the constructions above are written in
    "il lo la i gli le un uno una ogni questo questa quello quella di del della dei degli delle a in su per con da tra fra al nel sul",
    "der die das den dem des ein eine einen einem einer eines jeden jede jedes jedem diesen diese dieses zu bei mit von für auf im am an um nach aus sie er es",
    "le la les un une des du de ce cette ces chaque à en sur pour avec par au aux",
    "el los las unos unas cada este esta en con por para al del",
  ]
    .join(" ")
    .split(" "),
);

/** A value in a sentence: a code span, a quoted string, or a word (with dots, slashes, digits…). */
const TICK = "`";
const VALUE = String.raw`(?:${TICK}([^${TICK}\n]{1,80})${TICK}|"([^"\n]{1,80})"|'([^'\n]{1,80})'|([\p{L}\p{N}][\p{L}\p{N}._/:@+-]*))`;

/** Constructions that name what is replaced, whatever the value looks like. */
const STRONG = [
  "instead of",
  "rather than",
  "in place of",
  "no (?:more|longer)(?: use| using)?",
  "stop using",
  "invece di|piuttosto che|non più",
  String.raw`statt|anstatt|nicht mehr|kein(?:e|en)? (?:\p{L}+ )?mehr`,
  "au lieu de|plutôt que|plus de",
  "en lugar de|en vez de|ya no",
];
/** "not X", "non X", "nicht X": only when X is distinctive or the sentence goes on with the replacement. */
const NEGATION = "not|non|nicht|pas|don't use|do not use|never use";

const strongPattern = new RegExp(String.raw`(?<![\p{L}\p{N}])(?:${STRONG.join("|")})\s+(?:the |il |la |lo |le |der |die |das |el |los |las )?${VALUE}`, "giu");
const negationPattern = new RegExp(String.raw`(?<![\p{L}\p{N}])(?:${NEGATION})\s+(?:the |on |in |with |using |use |port |usare |usar |utiliser |utilizzare )?${VALUE}`, "giu");

/**
 * What each construction above starts with, found without the look-behind and the value after
 * it (`statt` also finds `anstatt`, `non` also `non più`, `kein` and `nicht` their `mehr` forms):
 * a text without any of them holds no retired value, so most sentences of a long span are passed
 * over after one quick scan of their text.
 */
const RETIRING_WORD =
  // `i` without `u` scans twice as fast; the two letters only `u` folds to ASCII ones (ſ to s, the Kelvin sign to k) always pass
  /instead of|rather than|in place of|no more|no longer|stop using|invece di|piuttosto che|non|statt|nicht|kein|au lieu de|plutôt que|plus de|en lugar de|en vez de|ya no|not|pas|don't use|do not use|never use|[\u017f\u212a]/i;

/** False when `text` holds no value retiredValues would find (true does not say it holds one). */
export const mayRetire = (text: string): boolean => RETIRING_WORD.test(text);

/** A value that cannot be a common word: it holds a digit or punctuation, or came quoted. */
const distinctive = (value: string, quoted: boolean) => quoted || /[\p{N}._/:@+-]/u.test(value);

// an article is written in lower case ("invece di uno switch"); a value in capitals is a value ("instead of IN")
const usable = (value: string) => value.length >= 2 && !(STOPWORDS.has(value.toLowerCase()) && value !== value.toUpperCase());
/** A plain word ends before the punctuation that closes its sentence ("tabs." is "tabs"). */
const trimmed = (value: string) => value.replace(/[._/:@+-]+$/, "");

/**
 * The values `text` says are no longer wanted: "not 8080, use 8443" → 8080; "spaces instead of
 * tabs" → tabs; "no more `lodash`" → lodash. A plain word after a bare "not" counts only when the
 * sentence goes on past it (", use …") or ends there ("use spaces, not tabs").
 */
export function retiredValues(text: string): string[] {
  if (!mayRetire(text)) return [];
  const values = new Set<string>();
  for (const m of text.matchAll(strongPattern)) {
    const value = m[1] ?? m[2] ?? m[3] ?? (m[4] && trimmed(m[4]));
    if (value && usable(value)) values.add(value.toLowerCase());
  }
  for (const m of text.matchAll(negationPattern)) {
    const quoted = m[1] ?? m[2] ?? m[3];
    const value = quoted ?? (m[4] && trimmed(m[4]));
    if (!value || !usable(value)) continue;
    // the sentence goes on with the replacement (", use …") or ends with what it turned down
    const rest = text.slice((m.index ?? 0) + m[0].length);
    const contrasted = /^\s*[,;]/.test(rest) || /^[.!]?\s*$/.test(rest);
    if (distinctive(value, quoted !== undefined) || contrasted) values.add(value.toLowerCase());
  }
  return [...values];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `value` as a whole token, any case. */
const tokenPattern = (value: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, "iu");

/** Whether `sentence` mentions `value` as a whole token, without itself saying it is not wanted. */
export function statesValue(sentence: string, value: string): boolean {
  return tokenPattern(value).test(sentence) && !retiredValues(sentence).includes(value);
}

/** A text at a position in the conversation; later positions are later in time. */
export interface Placed {
  text: string;
  at: number;
}

/**
 * The items still current: an item is retired when a text placed after it names one of the
 * values it states as no longer wanted.
 */
export function currentItems<T extends Placed>(items: readonly T[], corrections: readonly Placed[]): T[] {
  return currentItemsAfter(items, retirementsOf(corrections));
}

/** A value a text at `at` says is no longer wanted, with the pattern that finds it mentioned. */
export interface Retirement {
  value: string;
  at: number;
  pattern: RegExp;
}

/** What each of `corrections` retires: read once, for many calls of currentItemsAfter. */
export const retirementsOf = (corrections: readonly Placed[]): Retirement[] =>
  corrections.flatMap((c) => retiredValues(c.text).map((value) => ({ value, at: c.at, pattern: tokenPattern(value) })));

/** currentItems, with the corrections' retirements read already. */
export function currentItemsAfter<T extends Placed>(items: readonly T[], retirements: readonly Retirement[]): T[] {
  if (retirements.length === 0) return [...items];
  // statesValue, with each pattern made once and each item's own retired values read once, when first needed
  return items.filter((item) => {
    let own: string[] | undefined;
    const ownRetired = () => {
      own ??= retiredValues(item.text);
      return own;
    };
    return !retirements.some((r) => r.at > item.at && r.pattern.test(item.text) && !ownRetired().includes(r.value));
  });
}
