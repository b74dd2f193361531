// The header names a Connection header lists (RFC 9110 §7.6.1): one parser for the gateway's two
// readers of it, identity (which refuses a request whose Connection would strip a header it keys
// on) and forwarding (which drops the headers it names), so the two cannot read it differently. Pure.

/** The lower-cased, trimmed names a Connection value lists; undefined for a bare keep-alive or close. */
export function connectionTokens(value: string): string[] | undefined {
  if (value === 'keep-alive' || value === 'close') return undefined;
  return value
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
}
