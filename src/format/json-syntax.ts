/**
 * Whether a byte range is one well-formed JSON text, decided without building any value.
 *
 * The loader uses it on message lines it does not parse at open (see bodies.ts): a damaged line
 * is still reported with its line number when the session is opened, yet no objects are made for
 * bodies the context never reads. It follows RFC 8259 exactly as JSON.parse does on the decoded
 * line; bytes of 0x80 and above are accepted inside strings, as UTF-8 validity is checked
 * separately (and JSON.parse reads invalid sequences as replacement characters anyway).
 *
 * Iterative, with the open containers on a byte stack, so deep nesting cannot overflow the call
 * stack.
 */

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const IN_OBJECT = 1;
const IN_ARRAY = 2;

/** Escapes allowed after a backslash, besides `u`: " \ / b f n r t */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

const HEX = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEX[c.charCodeAt(0)] = 1;

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function isSpace(b: number): boolean {
  return b === SPACE || b === TAB || b === LF || b === CR;
}

function skipSpace(bytes: Uint8Array, i: number, end: number): number {
  if (i < end && bytes[i] > SPACE) return i; // compact JSON: the usual case, one comparison
  while (i < end && isSpace(bytes[i])) i++;
  return i;
}

/** Bytes that end the plain run of a string: the quote, a backslash, control characters. */
const STRING_STOP = new Uint8Array(256);
for (let b = 0; b < SPACE; b++) STRING_STOP[b] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** Position after the string whose opening quote is at `i`, or -1. */
function stringEnd(bytes: Uint8Array, i: number, end: number): number {
  i++;
  while (i < end) {
    // one table lookup per byte of text: this loop is where the time goes
    while (i < end && STRING_STOP[bytes[i]] === 0) i++;
    if (i >= end) return -1;
    const b = bytes[i];
    if (b === QUOTE) return i + 1;
    if (b === BACKSLASH) {
      const next = bytes[i + 1];
      if (next === 0x75) {
        if (i + 6 > end || !HEX[bytes[i + 2]] || !HEX[bytes[i + 3]] || !HEX[bytes[i + 4]] || !HEX[bytes[i + 5]]) return -1;
        i += 6;
      } else if (i + 1 < end && SIMPLE_ESCAPE[next]) i += 2;
      else return -1;
    } else return -1; // a control character
  }
  return -1;
}

function digitsEnd(bytes: Uint8Array, i: number, end: number): number {
  while (i < end && bytes[i] >= ZERO && bytes[i] <= NINE) i++;
  return i;
}

/** Position after the number starting at `i`, or -1. */
function numberEnd(bytes: Uint8Array, i: number, end: number): number {
  if (bytes[i] === MINUS) i++;
  if (i >= end) return -1;
  if (bytes[i] === ZERO) i++;
  else if (bytes[i] > ZERO && bytes[i] <= NINE) i = digitsEnd(bytes, i + 1, end);
  else return -1;
  if (i < end && bytes[i] === DOT) {
    const after = digitsEnd(bytes, i + 1, end);
    if (after === i + 1) return -1;
    i = after;
  }
  if (i < end && (bytes[i] === LOWER_E || bytes[i] === UPPER_E)) {
    i++;
    if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
    const after = digitsEnd(bytes, i, end);
    if (after === i) return -1;
    i = after;
  }
  return i;
}

function literalEnd(bytes: Uint8Array, i: number, end: number, word: readonly number[]): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (bytes[i + k] !== word[k]) return -1;
  return i + word.length;
}

/** Position after the scalar (string, number, literal) at `i`, or -1. */
function scalarEnd(bytes: Uint8Array, i: number, end: number): number {
  const b = bytes[i];
  if (b === QUOTE) return stringEnd(bytes, i, end);
  if (b === MINUS || (b >= ZERO && b <= NINE)) return numberEnd(bytes, i, end);
  if (b === 0x74) return literalEnd(bytes, i, end, TRUE);
  if (b === 0x66) return literalEnd(bytes, i, end, FALSE);
  if (b === 0x6e) return literalEnd(bytes, i, end, NULL);
  return -1;
}

/** The open containers, shared by every call (they never overlap): no allocation per line. */
let stack = new Uint8Array(64);

/** Whether `bytes[start, end)` is exactly one JSON value, with optional surrounding whitespace. */
export function isWellFormedJson(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
  return check(bytes, skipSpace(bytes, start, end), end, 0, false) === end;
}

/**
 * The byte ranges of the objects when `bytes[start, end)` is two or more complete JSON objects
 * written back to back (optionally with spaces between): what two programs appending to one file
 * at the same moment leave on a line. Undefined for one value, and for anything else that is not
 * JSON. The loader reads each object as its own entry (storage/load.ts).
 */
export function splitGluedObjects(bytes: Uint8Array, start: number, end: number): [number, number][] | undefined {
  const pieces: [number, number][] = [];
  let i = skipSpace(bytes, start, end);
  while (i < end) {
    if (bytes[i] !== OPEN_OBJECT) return undefined;
    const after = check(bytes, i, end, 0, false);
    if (after < 0) return undefined;
    pieces.push([i, after]);
    i = skipSpace(bytes, after, end);
  }
  return pieces.length >= 2 ? pieces : undefined;
}

/**
 * Whether `bytes[at, end)` correctly finishes a JSON text whose start, already checked by the
 * caller, left `objects` objects open and ended with a complete member value. The loader reads a
 * message line's first members itself (bodies.ts), so the check picks up where that read stopped.
 */
export function finishesJsonObjects(bytes: Uint8Array, at: number, end: number, objects: number): boolean {
  reserve(objects);
  stack.fill(IN_OBJECT, 0, objects);
  return check(bytes, at, end, objects, true) === end;
}

function reserve(depth: number): void {
  if (depth < stack.length) return;
  let size = stack.length;
  while (size <= depth) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(stack);
  stack = grown;
}

/**
 * The grammar from position i, with `depth` containers open (their kinds on the stack). Each turn
 * of the loop reads one value at i (opening a container counts as reading its start), then what
 * may follow it; `afterValue` starts in the second half. Returns the position right after the
 * outermost value (spaces after it skipped only while containers are open), or -1.
 */
function check(bytes: Uint8Array, i: number, end: number, depth: number, afterValue: boolean): number {
  for (;;) {
    if (!afterValue) {
      if (i >= end) return -1;
      const b = bytes[i];
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        i = skipSpace(bytes, i + 1, end);
        const close = b === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
        if (i < end && bytes[i] === close) {
          i++;
        } else {
          reserve(depth);
          stack[depth++] = b === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY;
          if (b === OPEN_OBJECT) {
            i = memberValueStart(bytes, i, end);
            if (i < 0) return -1;
          }
          continue;
        }
      } else {
        i = scalarEnd(bytes, i, end);
        if (i < 0) return -1;
      }
    }
    afterValue = false;
    // after a complete value: close containers, or move on to the next element
    for (;;) {
      if (depth === 0) {
        const after = skipSpace(bytes, i, end);
        return after === end ? end : i;
      }
      i = skipSpace(bytes, i, end);
      if (i >= end) return -1;
      const container = stack[depth - 1];
      const c = bytes[i];
      if (c === COMMA) {
        i = skipSpace(bytes, i + 1, end);
        if (container === IN_OBJECT) {
          i = memberValueStart(bytes, i, end);
          if (i < 0) return -1;
        }
        break;
      }
      if ((container === IN_OBJECT && c === CLOSE_OBJECT) || (container === IN_ARRAY && c === CLOSE_ARRAY)) {
        depth--;
        i++;
        continue;
      }
      return -1;
    }
  }
}

/** From a member's key at `i` (`"key" :`), the position of its value, or -1. */
function memberValueStart(bytes: Uint8Array, i: number, end: number): number {
  if (i >= end || bytes[i] !== QUOTE) return -1;
  i = stringEnd(bytes, i, end);
  if (i < 0) return -1;
  i = skipSpace(bytes, i, end);
  if (i >= end || bytes[i] !== COLON) return -1;
  return skipSpace(bytes, i + 1, end);
}
