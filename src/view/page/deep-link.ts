/**
 * The page's deep link, `#<entry id>`: written percent-encoded, read back decoded where it
 * decodes, so an id with `%`, `#` or a space, and a link typed with a bare `%`, both work.
 */

/** The entry id the deep link names. */
export function linkedId(): string {
  const raw = location.hash.slice(1);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Points the deep link at `id`, without a new history entry. */
export function linkTo(id: string): void {
  const hash = `#${encodeURIComponent(id)}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
