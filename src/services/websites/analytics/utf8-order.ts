/**
 * Compares two strings as SQLite's BINARY collation does: by their UTF-8 bytes, which is code point
 * order. JavaScript's `<` compares UTF-16 code units instead, and puts the characters past U+FFFF
 * (surrogate pairs) before U+E000–U+FFFF; merging SQLite's sorted rows needs SQLite's order.
 */
export function utf8Compare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

/** A code unit's place in code point order: surrogates after U+E000–U+FFFF. */
function codeUnitRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}
