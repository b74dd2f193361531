import type { Redis } from 'ioredis';
import { send } from './gateway.js';

/**
 * Script executions Redis has run so far (EVALSHA and EVAL, every outcome), from INFO commandstats.
 * The store runs one script per round trip, so a difference of this count is the round trips between.
 */
export async function scriptCalls(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  let total = 0;
  for (const command of ['evalsha', 'eval']) {
    const line = new RegExp(`^cmdstat_${command}:(.*)$`, 'm').exec(info)?.[1];
    if (!line) continue;
    for (const field of ['calls', 'rejected_calls', 'failed_calls']) {
      const value = new RegExp(`(?:^|,)${field}=(\\d+)`).exec(line)?.[1];
      total += Number(value ?? 0);
    }
  }
  return total;
}

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
