import type { RequestIdentity } from '../identity/resolve.js';
import type { Refusal } from '../limits/refusal.js';
import type { CompiledRoute } from '../rules/compile.js';

/** The 401s of counting's credentials (count-request.ts re-exports credentialRefusal). */

/** The same codes and messages as the embedded widget service's, so clients see one vocabulary. */
const JWT_ERRORS = {
  missing: {
    status: 401,
    decision: 'unauthorized',
    code: 'missing_token',
    message: 'Visitor token missing.',
  },
  expired: {
    status: 401,
    decision: 'unauthorized',
    code: 'token_expired',
    message: 'Visitor token has expired.',
  },
  invalid: {
    status: 401,
    decision: 'unauthorized',
    code: 'invalid_token',
    message: 'Visitor token is invalid.',
  },
} as const satisfies Record<string, Refusal>;

const TOKEN_MISSING: Refusal = {
  status: 401,
  decision: 'unauthorized',
  code: 'missing_token',
  message: 'API token missing.',
};
const TOKEN_INVALID: Refusal = {
  status: 401,
  decision: 'unauthorized',
  code: 'invalid_token',
  message: 'API token is invalid or has been revoked.',
};

/** The 401 when an enforcing limiter keys on a credential the request lacks. The request was already counted. */
export function credentialRefusal(route: CompiledRoute, identity: RequestIdentity): Refusal | undefined {
  if (route.requiresJwt && identity.jwt && !identity.jwt.ok) return JWT_ERRORS[identity.jwt.reason];
  const token = identity.workspaceToken;
  if (route.requiresWorkspaceToken && token && !token.ok) {
    return token.reason === 'missing' ? TOKEN_MISSING : TOKEN_INVALID;
  }
  return undefined;
}
