/** "1 session", "2 sessions": a count with its noun, singular for exactly one. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}
