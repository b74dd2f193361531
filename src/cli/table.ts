/** Rows as aligned columns under a header, for the list commands; a null cell shows as `empty`. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
  empty = '-',
): string {
  const cells = [header, ...rows.map((row) => row.map((c) => (c === null ? empty : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
