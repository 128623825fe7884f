import { formatCount } from "../util/count.js";

/** "1 session", "2 sessions": a count with its noun, singular for exactly one. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}
