// The `Link` header of a page (GET /plants, GET /plants/changes): the next page's query, as the
// server wrote it, so that a helper asks for exactly that page (its cursor and filters) instead of
// building the query again.

/** The query of `rel="next"` in a Link header (without its `?`), or undefined on the last page. */
export function nextQuery(link: string | null): string | undefined {
  const target = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '')?.[1];
  // The target is relative to the page's URL; only its query is wanted.
  return target === undefined ? undefined : new URL(target, 'http://page.invalid').search.slice(1);
}
