import { send } from './gateway.js';

/** The Prometheus text of an admin listener's GET /metrics (which must answer 200). */
export async function scrape(adminUrl: string): Promise<string> {
  const reply = await send(`${adminUrl}/metrics`);
  if (reply.status !== 200) throw new Error(`GET /metrics answered ${reply.status}: ${reply.text}`);
  return reply.text;
}

/** The sample lines (no # HELP / # TYPE, no blank lines) of metrics whose name starts with `prefix`. */
export function samples(text: string, prefix = 'tollgate_'): string[] {
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

/** The value of the one sample line whose name and labels are exactly `series`; undefined when absent. */
export function sampleValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The gateway's `tollgate_in_flight{kind="requests"}` gauge; -1 when it is missing. */
export async function requestsInFlight(adminUrl: string): Promise<number> {
  return sampleValue(await scrape(adminUrl), 'tollgate_in_flight{kind="requests"}') ?? -1;
}
