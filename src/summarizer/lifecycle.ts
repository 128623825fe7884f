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
 * What each construction above starts with, at the start of a word, without the value after it
 * (`non` also finds `non più`, `kein` and `nicht` their `mehr` forms): a text without any of them
 * holds no retired value, so most sentences of a long span are passed over after one quick scan
 * of their text. The character before the word is matched rather than looked behind at (twice as
 * fast over a long span); only `test` is used.
 */
const RETIRING_WORD =
  /(?:^|[^\p{L}\p{N}])(?:instead of|rather than|in place of|no more|no longer|stop using|invece di|piuttosto che|non|statt|anstatt|nicht|kein|au lieu de|plutôt que|plus de|en lugar de|en vez de|ya no|not|pas|don't use|do not use|never use)/iu;

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

/** A value a text at `at` says is no longer wanted. */
export interface Retirement {
  value: string;
  at: number;
}

/** What each of `corrections` retires: read once, for many calls of currentItemsAfter. */
export const retirementsOf = (corrections: readonly Placed[]): Retirement[] =>
  corrections.flatMap((c) => retiredValues(c.text).map((value) => ({ value, at: c.at })));

/** currentItems, with the corrections' retirements read already. */
export function currentItemsAfter<T extends Placed>(items: readonly T[], retirements: readonly Retirement[]): T[] {
  if (retirements.length === 0) return [...items];
  const retired = retiredItems(items, retirements);
  return retired.size === 0 ? [...items] : items.filter((_, i) => !retired.has(i));
}

/** Letters and digits in a row: where a whole-token match of a value can start and end. */
const RUN = /[\p{L}\p{N}]+/gu;
/** A key equal for any two texts that match case-insensitively (`iu`: ſ and s, K and the Kelvin sign, ς and σ). */
const foldKey = (text: string) => text.toUpperCase().toLowerCase();
const NON_ASCII = /[^\x00-\x7f]/;
/** A letter or digit of lower-cased ASCII text (NaN, past either end, is neither). */
const isRunChar = (code: number) => (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a);

/**
 * Whether `lower` (an ASCII text, lower-cased) holds the ASCII `value` as a whole token: what the
 * retirement's pattern answers, without compiling it (a long span retires a thousand values).
 */
function holdsToken(lower: string, value: string): boolean {
  for (let at = lower.indexOf(value); at >= 0; at = lower.indexOf(value, at + 1)) {
    if (!isRunChar(lower.charCodeAt(at - 1)) && !isRunChar(lower.charCodeAt(at + value.length))) return true;
  }
  return false;
}

/**
 * The indexes of the items a later retirement names, statesValue's rule: a value retired after the
 * item, mentioned as a whole token, that the item does not itself turn down. A long span has
 * thousands of items and of retirements, so rather than testing every retirement's pattern on
 * every item, each value is tested only where it can match: only its latest retirement matters,
 * and an item of plain ASCII can hold a value only if it holds the value's first run of letters
 * and digits as one of its own (a whole-token match starts and ends where such runs do), where an
 * ASCII value is looked for without its pattern. Items with other characters, and values without
 * a run, are tested against everything with the pattern, as before.
 */
function retiredItems(items: readonly Placed[], retirements: readonly Retirement[]): Set<number> {
  const latest = new Map<string, Retirement>();
  for (const r of retirements) if ((latest.get(r.value)?.at ?? Number.NEGATIVE_INFINITY) < r.at) latest.set(r.value, r);
  const byRun = new Map<string, number[]>();
  const unindexed: number[] = [];
  const lowered: (string | undefined)[] = [];
  items.forEach((item, i) => {
    if (NON_ASCII.test(item.text)) {
      unindexed.push(i);
      return;
    }
    const lower = item.text.toLowerCase();
    lowered[i] = lower;
    for (const run of new Set(lower.match(RUN))) {
      const list = byRun.get(run);
      if (list) list.push(i);
      else byRun.set(run, [i]);
    }
  });
  const everyItem = items.map((_, i) => i);
  const own = new Map<number, string[]>();
  const turnsDown = (i: number, value: string) => {
    let values = own.get(i);
    if (!values) {
      values = retiredValues(items[i].text);
      own.set(i, values);
    }
    return values.includes(value);
  };
  const retired = new Set<number>();
  for (const r of latest.values()) {
    const run = r.value.match(RUN)?.[0];
    const plain = NON_ASCII.test(r.value) ? undefined : r.value.toLowerCase();
    // made only when an item or the value is not plain ASCII: a span retires a thousand values
    let pattern: RegExp | undefined;
    const mentions = (i: number) => {
      const lower = lowered[i];
      if (plain !== undefined && lower !== undefined) return holdsToken(lower, plain);
      pattern ??= tokenPattern(r.value);
      return pattern.test(items[i].text);
    };
    for (const list of run === undefined ? [everyItem] : [byRun.get(foldKey(run)) ?? [], unindexed]) {
      for (const i of list) {
        if (retired.has(i) || items[i].at >= r.at) continue;
        if (mentions(i) && !turnsDown(i, r.value)) retired.add(i);
      }
    }
  }
  return retired;
}
