/** `tollgate replay`'s report as tables, for people (report.ts makes it; --json prints it as is). */
import { formatTable } from '../table.js';
import type { DiffReport, SimulationReport } from './report.js';

/** A hashed key shortened for a table: each part's hash cut to 10 characters. */
const shortKey = (key: string) => key.replace(/=([A-Za-z0-9_-]{10})[A-Za-z0-9_-]+/g, '=$1…');

const pct = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);
const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
const either = (n: number | null) => (n === null ? '-' : String(n));

/** One simulation as tables: routes, limiters with the peak-use distribution of their keys, top keys. */
export function simulationText(label: string, r: SimulationReport): string {
  const out: string[] = [`${label}:`, ''];
  out.push(
    formatTable(
      ['route', 'requests', 'refused', 'shadow-refused', 'limiters'],
      r.routes.map((x) => [x.name, x.requests, x.refused, x.shadowRefused, x.limiters.join(',') || '-']),
    ),
  );
  if (r.unrouted) out.push(`(no route: ${r.unrouted} requests, answered 404)`);
  const answered = r.routes.filter((x) => x.banned || x.denied || x.lengthRequired);
  for (const x of answered) {
    out.push(
      `(${x.name}: ${x.banned} banned (429), ${x.denied} denied (403), ${x.lengthRequired} without a length (411))`,
    );
  }
  for (const x of r.routes) {
    const tiers = Object.entries(x.tiers);
    if (tiers.length) out.push(`(${x.name} by tier: ${tiers.map(([t, n]) => `${t} ${n}`).join(', ')})`);
  }
  out.push(
    '',
    'peak use of the limit per key (keys in each bucket):',
    formatTable(
      [
        'limiter',
        'requests',
        'refused',
        'keys',
        'keys refused',
        '0-50%',
        '50-80%',
        '80-100%',
        'refused',
        'windows',
      ],
      r.limiters.map((l) => [
        `${l.name}${l.shadow ? ' (shadow)' : ''}`,
        l.requests,
        `${l.refused} (${pct(l.refused, l.requests)})`,
        l.keys,
        l.keysRefused,
        l.peakUse['0-50'],
        l.peakUse['50-80'],
        l.peakUse['80-100'],
        l.peakUse.refused,
        l.windows,
      ]),
    ),
  );
  const policed = r.limiters.filter((l) => l.exempt || l.denied || l.banned || l.bansStarted);
  if (policed.length) {
    out.push(
      '',
      'allow and deny lists, bans:',
      formatTable(
        ['limiter', 'exempt', 'denied', 'banned', 'bans started'],
        policed.map((l) => [l.name, l.exempt, l.denied, l.banned, l.bansStarted]),
      ),
    );
  }
  for (const l of r.limiters) {
    if (l.topKeys.length === 0) continue;
    out.push(
      '',
      `top keys of ${l.name} (hashed):`,
      formatTable(
        ['key', 'requests', 'refused', 'peak'],
        l.topKeys.map((k) => [
          shortKey(k.key),
          k.requests,
          k.refused,
          k.refused ? 'refused' : `${k.peakPercent}%`,
        ]),
      ),
    );
  }
  const missing = Object.entries(r.missingKeyParts);
  if (missing.length) {
    out.push(
      '',
      `key parts the log does not carry (keyed as if missing: a credential by the client's IP, a header as empty): ` +
        missing.map(([p, n]) => `${p} (${n} requests)`).join(', '),
    );
  }
  if (r.warnings.length) out.push('');
  for (const w of r.warnings) {
    out.push(`warning: ${w.limiter}: ${w.message} (${w.requests} requests)`);
  }
  return out.join('\n');
}

export function diffText(d: DiffReport): string {
  return [
    'against the baseline (baseline -> candidate):',
    '',
    formatTable(
      ['route', 'refused', 'change'],
      d.routes.map((r) => [
        r.name,
        `${either(r.refused.baseline)} -> ${either(r.refused.candidate)}`,
        signed(r.refused.change),
      ]),
    ),
    '',
    formatTable(
      ['limiter', 'refused', 'change', 'keys refused', 'newly refused', 'no longer refused'],
      d.limiters.map((l) => [
        l.name,
        `${either(l.refused.baseline)} -> ${either(l.refused.candidate)}`,
        signed(l.refused.change),
        `${either(l.keysRefused.baseline)} -> ${either(l.keysRefused.candidate)}`,
        l.keysNewlyRefused,
        l.keysNoLongerRefused,
      ]),
    ),
  ].join('\n');
}
