// A named limiter: its windows, allow and deny lists, bans, Envoy descriptors, cost and store-failure policy.
import { z } from 'zod';
import { byteSize, duration, name, positiveInt } from './primitives.js';
import { failurePolicy } from './store.js';
import { leaseOption, window } from './window.js';

const descriptorEntry = z.strictObject({
  key: z.string().min(1).meta({ description: "The entry's key, e.g. remote_address or generic_key." }),
  value: z.string().min(1).optional().meta({
    description: 'Set: the entry must have this value. Unset: any value, each value counted apart.',
  }),
});

export const descriptorPattern = z.strictObject({
  domain: z.string().min(1).meta({ description: "The domain of Envoy's rate-limit request." }),
  entries: z.array(descriptorEntry).min(1).meta({
    description: "The descriptor's entries, in order: a descriptor matches when it has exactly these keys.",
  }),
});

/** An HTTP token (RFC 9110 §5.6.2): what a method or header name may be. */
export const httpToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A limiter's allow or deny list: who a request is, by client address or verified token id. */
const requestList = z.strictObject({
  addresses: z.array(z.string().min(1)).default([]).meta({
    description:
      'Client addresses or CIDRs (IPv4 or IPv6), matched against the client address (behind trusted proxies, X-Forwarded-For).',
  }),
  tokens: z
    .array(z.string().min(1))
    .default([])
    .meta({ description: 'Workspace-token (API-key) ids: a request whose verified token has one matches.' }),
  workspaces: z.array(z.string().min(1)).default([]).meta({
    description: 'Workspace names: a request whose verified workspace token belongs to one of them matches.',
  }),
});

const ban = z
  .strictObject({
    after: positiveInt.meta({ description: 'Refusals by this limiter that ban its key.' }),
    within: duration
      .refine((p) => p >= 1000, 'within must be at least 1s')
      .meta({ description: 'The refusals counted, from the first: a fixed window of this length.' }),
    for: duration
      .refine((p) => p >= 1000, 'for must be at least 1s')
      .meta({ description: 'How long a ban lasts: requests of the key get 429 banned until then.' }),
  })
  .meta({
    description:
      'A penalty box: a key refused `after` times within `within` is refused (429 banned) for `for`, ' +
      'in the store, without its windows being counted. See docs/limiting.md.',
  });

const limiterBody = {
  message: z.string().default('Too Many Attempts.').meta({ description: "The 429 body's message." }),
  limitedBody: z
    .enum(['error', 'problem'])
    .default('error')
    .meta({
      description:
        'The body of its 429: error, {"error":{"code":"rate_limited","message"}} (application/json); problem, ' +
        'application/problem+json (RFC 9457) of type quota-exceeded with the violated policies ' +
        '(draft-ietf-httpapi-ratelimit-headers).',
    }),
  shadow: z.boolean().default(false).meta({
    description: 'Count, log and report in the metrics, but never refuse and send no rate-limit headers.',
  }),
  overLimitCache: z
    .boolean()
    .default(true)
    .meta({ description: 'Refuse requests for a spent window from the in-process over-limit cache.' }),
  onStoreError: failurePolicy.optional().meta({
    description:
      'open, closed or local (count in this instance at the limit divided by the live instances) ' +
      'when the store fails; unset: store.onError.',
  }),
  windows: z.array(window).min(1).meta({
    description:
      'Checked and counted together, atomically. Two windows with the same period and key are refused: they would share a counter.',
  }),
  cost: z
    .union([
      positiveInt,
      z.strictObject({
        from: z
          .literal('content-length')
          .meta({ description: "The request attribute: its body's declared size." }),
        per: byteSize
          .prefault('1B')
          .meta({ description: 'Bytes per hit: the cost is ⌈size ÷ per⌉, at least 1.' }),
      }),
    ])
    .optional()
    .meta({
      description:
        'Hits a request spends in every window (unset: 1), or { from: content-length, per: 1KB }: its body size. ' +
        'A body of unknown size (chunked) is refused with 411. See docs/limiting.md#weighted-cost.',
    }),
  chargeAfter: z
    .strictObject({
      header: z.string().regex(httpToken, 'a header name').meta({
        description: 'The response header the upstream reports the cost in; it never reaches the client.',
      }),
      max: positiveInt.optional().meta({
        description: "A larger reported cost is charged as max (logged). Unset: the limiter's largest limit.",
      }),
    })
    .optional()
    .meta({
      description:
        'Charge the cost the upstream reports in a response header, after the response: the request is only checked ' +
        'for room before it is forwarded. See docs/limiting.md#charged-after-the-response.',
    }),
  countOnly: z
    .array(z.coerce.number().int().min(100).max(599))
    .min(1)
    .optional()
    .meta({
      description:
        'Count only responses with these statuses (e.g. [401]): the request is checked for room before it is ' +
        'forwarded and counted once its status is known.',
    }),
  descriptors: z
    .array(descriptorPattern)
    .default([])
    .meta({
      description:
        "The descriptors of Envoy's rate-limit requests this limiter answers (rateLimitService); " +
        'the first limiter (in config order) whose descriptor matches answers.',
    }),
  allow: requestList.optional().meta({
    description: 'Requests this limiter lets by without counting them (decision exempt).',
  }),
  deny: requestList.optional().meta({
    description: 'Requests this limiter refuses with 403 denied, never forwarded (deny wins over allow).',
  }),
  ban: ban.optional(),
  lease: leaseOption.meta({
    description:
      "Lease for every window of the limiter (a window's own lease wins; lease: false there turns it off). " +
      'See docs/limiting.md#leases.',
  }),
};

/** cost and chargeAfter name two ways of pricing a request: one at a time. */
const chargeChecks = (l: { cost?: unknown; chargeAfter?: unknown }, ctx: z.RefinementCtx) => {
  if (l.cost !== undefined && l.chargeAfter !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['cost'],
      message: 'cost and chargeAfter exclude each other: with chargeAfter the upstream reports the cost',
    });
};

/** [lease] What a lease cannot go with: a ban (checked in the store), deferred charging, other algorithms. */
const leaseChecks = (
  l: {
    lease?: unknown;
    ban?: unknown;
    chargeAfter?: unknown;
    countOnly?: unknown;
    windows: readonly { lease?: unknown; algorithm: string }[];
  },
  ctx: z.RefinementCtx,
) => {
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const leased = l.windows.map((w) => (w.lease === undefined ? !!l.lease : !!w.lease));
  if (!leased.some(Boolean)) return;
  const at = l.lease ? ['lease'] : ['windows', leased.indexOf(true), 'lease'];
  if (l.ban !== undefined)
    issue(
      at,
      'lease and ban exclude each other: a ban is checked in the store, a leased slice is spent here',
    );
  if (l.chargeAfter !== undefined || l.countOnly !== undefined)
    issue(at, 'lease needs requests counted at once (not chargeAfter or countOnly)');
  if (l.lease)
    l.windows.forEach((w, i) => {
      if (w.lease === undefined && w.algorithm !== 'fixed')
        issue(
          ['windows', i, 'lease'],
          `lease applies to algorithm: fixed only: set lease: false on this ${w.algorithm} window`,
        );
    });
};

export const limiter = z.strictObject(limiterBody).superRefine(chargeChecks).superRefine(leaseChecks);
export const inlineLimiter = z
  .strictObject({
    name: name.optional().meta({ description: 'Its name in metrics and logs; unset: <route>#<index>.' }),
    ...limiterBody,
  })
  .superRefine(chargeChecks)
  .superRefine(leaseChecks);
