// A route: paths, methods, upstream, limiters and CORS.
import { z } from 'zod';
import { httpToken, inlineLimiter } from './limiter.js';
import { byteSize, duration, name, stringList } from './primitives.js';

const pathPattern = z
  .string()
  .regex(/^\/[^*]*\*?$/, 'a path starting with "/", optionally ending in "*" (prefix match)')
  .meta({ title: 'path pattern' });

/** A browser origin as the Origin header carries it, "scheme://host[:port]" (lower case, no default port); undefined if it is none. */
function parseOrigin(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    return bare && !value.includes('?') && !value.includes('#') ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** "*", or a list (a YAML list, or a comma-separated string as environment variables give) of origins. */
const corsOrigins = z.union([z.array(z.string()), z.string()]).transform((value, ctx) => {
  const list = (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (list.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'name at least one origin, or "*"' });
    return z.NEVER;
  }
  if (list.includes('*')) {
    if (list.length === 1) return '*' as const;
    ctx.addIssue({ code: 'custom', message: '"*" already allows every origin: list no others with it' });
    return z.NEVER;
  }
  const origins: string[] = [];
  list.forEach((entry, i) => {
    const origin = parseOrigin(entry);
    if (origin !== undefined) origins.push(origin);
    else {
      ctx.addIssue({
        code: 'custom',
        path: [i],
        message: `not an origin: "${entry}" (write scheme://host[:port], e.g. https://shop.example)`,
      });
    }
  });
  return origins;
});

export const corsPolicy = z
  .strictObject({
    origins: corsOrigins.meta({
      description:
        'Origins whose pages may call these routes: "*" (any), or a list (or comma-separated string) ' +
        'of "scheme://host[:port]".',
    }),
    methods: stringList
      .pipe(z.array(z.string().regex(httpToken, 'a method name').toUpperCase()).min(1))
      .default(['GET', 'HEAD', 'POST'])
      .meta({ description: 'Methods a cross-origin page may use (Access-Control-Allow-Methods).' }),
    headers: stringList
      .pipe(z.array(z.string().regex(httpToken, 'a header name').toLowerCase()))
      .default([])
      .meta({ description: 'Request headers a cross-origin page may send (Access-Control-Allow-Headers).' }),
    maxAge: duration
      .refine((d) => d <= 86_400_000, 'at most 24h (browsers cap it lower: Chromium at 2h)')
      .prefault('10m')
      .meta({ description: 'How long a browser may cache a preflight answer (Access-Control-Max-Age).' }),
    credentials: z.boolean().default(false).meta({
      description: 'Let pages send cookies and read responses with them (needs a list of origins).',
    }),
  })
  .refine((p) => !(p.credentials && p.origins === '*'), {
    path: ['credentials'],
    message: 'credentials need a list of origins: with "*" any site could act as its visitors',
  });

export const route = z.strictObject({
  name: name.meta({ description: 'Used in logs and metrics.' }),
  hosts: z
    .array(z.string().min(1))
    .default(['*'])
    .meta({ description: '"*", "*.example.com" or an exact host; case-insensitive, the port ignored.' }),
  methods: z.array(z.string().toUpperCase()).default(['*']).meta({ description: 'HTTP methods ("*": any).' }),
  paths: z
    .array(pathPattern)
    .min(1)
    .meta({
      description:
        'Exact paths, or prefixes ending in "*" ("/v1/wp/*"). Matched against the canonical request ' +
        'target (fragment dropped, unreserved escapes decoded, "//" collapsed, "." and ".." resolved), ' +
        'case-insensitively and without ";params"; the query is ignored, and an exact path also matches ' +
        'with a trailing "/".',
    }),
  upstream: name.meta({ description: 'The name of an upstream.' }),
  limiters: z
    .array(z.union([name, inlineLimiter]))
    .prefault([])
    .meta({
      description:
        'Limiter names, or inline limiters (the fields of a limiter, and an optional name). A limiter may appear once per route.',
    }),
  maxBodySize: byteSize.optional().meta({
    description:
      'Largest request body, read whole at the gateway before forwarding (413 past it). Unset: ' +
      'requests.maxBodySize. 0: the body is streamed to the upstream unread and unbounded. A route to ' +
      'an embedded service is never bound looser than services.maxBodySize.',
  }),
  stream: z
    .boolean()
    .default(false)
    .meta({
      description:
        "The route serves event streams (Server-Sent Events): forwarded on the upstream's stream pool " +
        '(streamConnections) and counted against the streams caps, not the requests in flight per IP.',
    }),
  cors: z
    .union([name, corsPolicy])
    .optional()
    .meta({ description: 'Cross-origin access from browsers: a policy named under `cors`, or one inline.' }),
});
