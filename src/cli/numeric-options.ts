/**
 * Parsers for the numeric options several commands share. A bad value throws commander's
 * InvalidArgumentError, so it becomes a usage error (exit 2) that says what was expected.
 */
import { InvalidArgumentError } from "commander";

/** A token count of at least 1, such as a context window. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer (tokens)");
  return n;
}

/** A token count that may be 0, such as tokens kept or protected. */
export function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("must be a whole number of tokens (0 or more)");
  return n;
}

/** A count of at least 1 that is not tokens, such as how many rows to list. */
export function positiveCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive whole number");
  return n;
}

/** A sampling temperature, 0 to 2 as the providers take it. */
export function temperature(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 2) throw new InvalidArgumentError("must be a number from 0 to 2");
  return n;
}
