// A limiter's window: limit, period, algorithm, calendar alignment, key and lease.
import { z } from 'zod';
import { duration, keyPart, name, positiveInt } from './primitives.js';

/** A month as a duration (a year ÷ 12); with align: calendar, a calendar month of its real length. */
export const MONTH_MS = 2_629_800_000;
export const CALENDAR_PERIODS: ReadonlyMap<number, 'day' | 'week' | 'month'> = new Map([
  [86_400_000, 'day'],
  [604_800_000, 'week'],
  [MONTH_MS, 'month'],
]);
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const knownZone = (timeZone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
};
const windowPeriod = z.union([z.literal('1mo').transform(() => MONTH_MS), duration]);

/** [lease] `lease: true`, and each field left unset (src/rules/model.ts's LeaseRule). */
export const DEFAULT_LEASE = { max: 1000, spread: 4 } as const;

/** [lease] Leased slices of a fixed window's budget (docs/limiting.md#leases). */
export const leaseOption = z
  .union([
    z.boolean(),
    z.strictObject({
      max: positiveInt.default(DEFAULT_LEASE.max).meta({
        description: `The largest slice an instance leases at once (unset: ${DEFAULT_LEASE.max}).`,
      }),
      spread: positiveInt.default(DEFAULT_LEASE.spread).meta({
        description: `An instance leases at most 1 ÷ (spread × live instances) of what remains (unset: ${DEFAULT_LEASE.spread}).`,
      }),
    }),
  ])
  .optional()
  .meta({
    description:
      'Lease slices of the remaining budget and spend them in this instance, without a round trip per ' +
      `request (fixed windows; true: { max: ${DEFAULT_LEASE.max}, spread: ${DEFAULT_LEASE.spread} }; false: off). ` +
      'The total admitted never exceeds the limit; unspent slices under-admit at most instances × max. ' +
      'See docs/limiting.md#leases.',
  });

export const window = z
  .strictObject({
    limit: positiveInt.meta({
      description: 'Requests allowed per period (token-bucket: tokens that come back per period).',
    }),
    period: windowPeriod
      .refine((p) => p >= 1000, 'period must be at least 1s')
      .meta({
        description:
          "The window's length (at least 1s; 1mo is a year ÷ 12). A fixed window starts at its key's first hit " +
          '(or, with align: calendar, at a calendar boundary); sliding windows are aligned on the clock.',
      }),
    algorithm: z
      .enum(['fixed', 'sliding', 'token-bucket'])
      .default('fixed')
      .meta({
        description:
          'fixed: limit per period from the first hit; sliding: a sliding-window counter (the previous ' +
          "window's count weighted by overlap); token-bucket: GCRA, limit per period with a burst. See docs/limiting.md.",
      }),
    burst: positiveInt.optional().meta({
      description: 'token-bucket only: requests that may pass at once (what the bucket holds); unset: limit.',
    }),
    align: z
      .enum(['first-hit', 'calendar'])
      .optional()
      .meta({
        description:
          'calendar (algorithm fixed, period 1d, 1w or 1mo): the window resets at the calendar boundary ' +
          '(midnight, the week start, the 1st of the month) in timeZone. Unset: first-hit.',
      }),
    timeZone: z.string().optional().meta({
      description:
        'align: calendar only: the IANA time zone of the calendar (e.g. Europe/Berlin). Unset: UTC.',
    }),
    weekStart: z.enum(WEEKDAYS).optional().meta({
      description: 'align: calendar, period 1w only: the first day of the week. Unset: monday (ISO).',
    }),
    tiers: z
      .record(
        name,
        z.strictObject({
          limit: positiveInt.meta({ description: "The tier's limit (token-bucket: its refill per period)." }),
          burst: positiveInt
            .optional()
            .meta({ description: "token-bucket only: the tier's burst; unset: limit." }),
        }),
      )
      .optional()
      .meta({
        description:
          'Limit (and burst) per named tier, e.g. { free: { limit: 10 }, pro: { limit: 100 } }. A request of ' +
          "another tier, or of none, gets the window's own limit (see docs/limiting.md#tiers-and-overrides).",
      }),
    key: z
      .array(keyPart)
      .superRefine((parts, ctx) => {
        parts.forEach((p, i) => {
          if (parts.indexOf(p) < i)
            ctx.addIssue({
              code: 'custom',
              path: [i],
              message: `duplicate key part "${p}": each part may appear once`,
            });
        });
      })
      .default([])
      .meta({
        description:
          "The key parts that identify whose budget a request spends. Required on a route's limiters; " +
          "a limiter that only answers Envoy's descriptors keys by their values instead.",
      }),
    lease: leaseOption,
  })
  .superRefine((w, ctx) => {
    if (w.burst !== undefined && w.algorithm !== 'token-bucket')
      ctx.addIssue({
        code: 'custom',
        path: ['burst'],
        message: 'burst applies to algorithm: token-bucket only',
      });
    calendarChecks(w, ctx);
    if (w.lease && w.algorithm !== 'fixed')
      ctx.addIssue({
        code: 'custom',
        path: ['lease'],
        message: `lease applies to algorithm: fixed only (a ${w.algorithm} window is counted exactly)`,
      });
    // The store decides in integers below 2^53 (limit × period, burst × period in ms).
    const most = w.algorithm === 'token-bucket' ? (w.burst ?? w.limit) : w.limit;
    if (w.algorithm !== 'fixed' && most * w.period > Number.MAX_SAFE_INTEGER)
      ctx.addIssue({
        code: 'custom',
        path: [w.algorithm === 'token-bucket' && w.burst !== undefined ? 'burst' : 'limit'],
        message: `${w.algorithm}: limit (or burst) × period in ms must stay below 2^53`,
      });
    for (const [tier, t] of Object.entries(w.tiers ?? {})) {
      if (t.burst !== undefined && w.algorithm !== 'token-bucket')
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', tier, 'burst'],
          message: 'burst applies to algorithm: token-bucket only',
        });
      if (w.algorithm !== 'fixed' && Math.max(t.limit, t.burst ?? 0) * w.period > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', tier, 'limit'],
          message: `${w.algorithm}: limit (or burst) × period in ms must stay below 2^53`,
        });
    }
  });

/** align: calendar and its companions (timeZone, weekStart). */
function calendarChecks(
  w: { period: number; algorithm: string; align?: string; timeZone?: string; weekStart?: string },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (w.align !== 'calendar') {
    if (w.timeZone !== undefined) issue('timeZone', 'timeZone applies to align: calendar only');
    if (w.weekStart !== undefined) issue('weekStart', 'weekStart applies to align: calendar only');
    return;
  }
  if (w.algorithm !== 'fixed')
    issue(
      'align',
      `align: calendar applies to algorithm: fixed only (a ${w.algorithm} window has no calendar boundary)`,
    );
  const unit = CALENDAR_PERIODS.get(w.period);
  if (unit === undefined) issue('period', 'align: calendar needs period 1d, 1w or 1mo');
  if (w.weekStart !== undefined && unit !== 'week') issue('weekStart', 'weekStart applies to period 1w only');
  if (w.timeZone !== undefined && !knownZone(w.timeZone))
    issue('timeZone', `unknown time zone "${w.timeZone}" (an IANA name, e.g. Europe/Berlin)`);
}
