import { describe, expect, test } from 'vitest';
import { connectionStrips } from '../../src/identity/resolve.js';
import { connectionTokens } from '../../src/net/connection-header.js';
import { endToEnd } from '../../src/proxy/headers.js';

describe('the Connection header, read once for identity and forwarding', () => {
  test('its names, lower-cased and trimmed; none for a bare keep-alive or close', () => {
    expect(connectionTokens('Keep-Alive, X-API-Key ,te')).toEqual(['keep-alive', 'x-api-key', 'te']);
    expect(connectionTokens('keep-alive')).toBeUndefined();
    expect(connectionTokens('close')).toBeUndefined();
  });

  test('identity and forwarding agree on the names it lists', () => {
    const connection = 'keep-alive, X-Client-Id';
    expect(connectionStrips(connection, new Set(['x-client-id']))).toBe('x-client-id');
    expect(connectionStrips(['close', 'X-Client-Id'], new Set(['x-client-id']))).toBe('x-client-id');
    expect(connectionStrips('close', new Set(['close']))).toBeUndefined();
    expect(endToEnd({ connection, 'x-client-id': 'a', 'x-keep': 'b' })).toEqual({ 'x-keep': 'b' });
  });
});
