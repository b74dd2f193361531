/**
 * A stored timestamp (ISO-8601 UTC with milliseconds) as Laravel serialises a date: microseconds,
 * `2026-01-01T00:00:00.000000Z`, which the original clients parse. Anything else is left as it is.
 */
export function laravelTime(iso: string): string {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(iso);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}Z` : iso;
}
