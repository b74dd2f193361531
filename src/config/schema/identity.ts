// Who a request is: visitor JWTs, workspace tokens, and the tiers they select.
import { z } from 'zod';
import { duration, stringList } from './primitives.js';

export const jwt = z.strictObject({
  secret: z
    .string()
    .default('')
    .meta({ description: 'The HMAC (HS256) shared secret. Empty: secretFile is used.' }),
  secretFile: z.string().default('').meta({
    description:
      'A file holding the HMAC secret, used when secret is empty; created with a random secret if missing.',
  }),
  publicKeys: z
    .array(z.string())
    .default([])
    .meta({ description: 'PEM (SPKI) files, for RS*, PS*, ES* or EdDSA tokens.' }),
  jwksFile: z.string().default('').meta({
    description:
      'A local JWKS JSON file (keys chosen by kid and alg). Key material is resolved in the order jwksFile, publicKeys, secret, secretFile.',
  }),
  algorithms: z
    .array(z.string().refine((a) => a.toLowerCase() !== 'none', '"none" is never allowed'))
    .min(1)
    .meta({
      description:
        'The accepted alg values ("none" is refused). The embedded widget signs with the first, ' +
        'which must then be HS256, HS384 or HS512.',
    }),
  issuer: z
    .string()
    .optional()
    .meta({ description: 'When set, the iss claim must equal it (and issued tokens carry it).' }),
  audience: z
    .string()
    .optional()
    .meta({ description: 'When set, the aud claim must equal it (and issued tokens carry it).' }),
  sessionClaim: z
    .string()
    .default('sid')
    .meta({ description: 'The claim that identifies the visitor session: the jwt key part.' }),
  clockTolerance: duration.prefault(0).meta({ description: 'Leeway for exp and nbf.' }),
  ttl: duration
    .refine((d) => d >= 1000, 'must be at least 1s')
    .prefault('24h')
    .meta({ description: 'Lifetime of the visitor tokens the embedded widget service issues.' }),
});

const workspaceTokens = z.strictObject({
  source: z.enum(['database', 'static']).default('static').meta({
    description:
      'database: the tokens `tollgate tokens create` issues, in services.dataDir; static: the list in static.',
  }),
  cacheTtl: duration.prefault('5s').meta({
    description:
      'How long a verified database token is trusted without asking again, so a revocation bites at most ' +
      'this late. Failures are never cached.',
  }),
  static: z
    .array(
      z.strictObject({
        id: z.string().min(1).meta({ description: 'The token id (the part before "|").' }),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/i)
          .meta({
            description: "The SHA-256 (hex) of the secret part, e.g. printf %s 's3cret' | sha256sum.",
          }),
        plan: z.string().min(1).optional().meta({
          description: "The token's plan: its tier when tiers.workspaceTokenPlan is on.",
        }),
        workspace: z.string().min(1).optional().meta({
          description:
            'The workspace the token belongs to, for overrides keyed workspace:<name> and lists naming workspaces.',
        }),
      }),
    )
    .default([])
    .meta({ description: 'The tokens the gateway accepts when source is static.' }),
});

export const identity = z.strictObject({
  trustedProxies: stringList.prefault([]).meta({
    description:
      'CIDRs or addresses whose X-Forwarded-For is honoured: it is walked from the right, skipping ' +
      'trusted hops, and the first untrusted address is the client.',
  }),
  ipv6PrefixLength: z.coerce
    .number()
    .int()
    .min(1)
    .max(128)
    .default(64)
    .meta({ description: 'IPv6 clients are keyed by this prefix (IPv4-mapped IPv6 counts as IPv4).' }),
  jwt: jwt.optional().meta({
    description:
      'Visitor-session JWTs (the jwt key part), verified with jose. Required when a route has a limiter ' +
      'keyed on jwt, and whenever the widget is embedded (it signs with this entry, so it needs secret or secretFile).',
  }),
  workspaceTokens: workspaceTokens
    .prefault({})
    .meta({ description: 'Workspace API tokens "<id>|<secret>" (the workspace_token key part).' }),
});

export const tierJwt = z.strictObject({
  claim: z.string().min(1).default('plan').meta({ description: 'The claim that names the tier.' }),
  jwksUrl: z.string().default('').meta({
    description: 'A JWKS URL (fetched and cached by jose) to verify a bearer JWT with.',
  }),
  jwksFile: z
    .string()
    .default('')
    .meta({ description: 'A local JWKS JSON file to verify a bearer JWT with.' }),
  publicKeys: z
    .array(z.string())
    .default([])
    .meta({ description: 'PEM (SPKI) files to verify a bearer JWT with.' }),
  secret: z.string().default('').meta({ description: 'An HMAC secret to verify a bearer JWT with.' }),
  algorithms: z
    .array(z.string().refine((a) => a.toLowerCase() !== 'none', '"none" is never allowed'))
    .optional()
    .meta({ description: 'The accepted alg values; unset: those of identity.jwt, or RS256 and ES256.' }),
  issuer: z.string().optional().meta({ description: 'When set, the iss claim must equal it.' }),
  audience: z.string().optional().meta({ description: 'When set, the aud claim must equal it.' }),
});

export const tiers = z.strictObject({
  jwt: tierJwt.optional().meta({
    description:
      'The tier is a claim of a verified JWT. With none of jwksUrl, jwksFile, publicKeys or secret set, the ' +
      'visitor JWT (identity.jwt) is read; otherwise the Authorization bearer JWT, verified with them.',
  }),
  workspaceTokenPlan: z.boolean().default(false).meta({
    description:
      "The tier is the verified workspace token's plan (static: its plan; database: its workspace's).",
  }),
  overrides: z
    .strictObject({
      file: z
        .string()
        .default('')
        .meta({
          description:
            'A YAML or JSON file of overrides ("<kind>:<value>": tier, unlimited or { limit, burst }), reloaded ' +
            'when it changes; a bad file keeps the last good overrides. Empty: none from a file.',
        }),
      pollInterval: duration
        .refine((d) => d >= 100, 'must be at least 100ms')
        .prefault('1s')
        .meta({
          description:
            'How often the store is asked whether the admin API changed the overrides (one GET of a version key).',
        }),
    })
    .prefault({})
    .meta({
      description: 'Overrides of the tier or limit per API token, workspace, JWT subject or address.',
    }),
});
