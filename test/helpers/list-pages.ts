/**
 * Reference paging for the list models: the list dealt out into pages of `perPage` rows, and what
 * the page numbered `page` (from 1) must show and say about itself. It counts rows off the pages
 * rather than computing offsets, so it does not repeat the service's arithmetic.
 */
export function pageOf<T>(list: readonly T[], perPage: number, page: number) {
  const pages: T[][] = [[]]; // an empty list is one empty page
  for (const row of list) {
    if (pages.at(-1)!.length === perPage) pages.push([]);
    pages.at(-1)!.push(row);
  }
  const rows = pages[page - 1] ?? [];
  // Where the shown rows stand in the whole list, counted from 1.
  const positions = rows.map((row) => list.indexOf(row) + 1);
  return {
    rows,
    /** Whether a page after this one holds rows. */
    hasNext: pages[page] !== undefined,
    meta: {
      current_page: page,
      from: positions[0] ?? null,
      last_page: pages.length,
      per_page: perPage,
      to: positions.at(-1) ?? null,
      total: list.length,
    },
  };
}
