/**
 * CSV (RFC 4180) of a table: every field quoted when it holds a comma, quote or line break, and
 * fields a spreadsheet would read as a formula (=, +, -, @, tab, CR first) prefixed with a quote
 * (OWASP's advice on CSV injection): page URLs, referrers and leads are visitors' text.
 */
export function csvField(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csv(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}
