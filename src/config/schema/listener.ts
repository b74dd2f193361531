// A public listener: address, mode, TLS, HTTP/2 and mTLS.
import { z } from 'zod';
import { name, port, positiveInt } from './primitives.js';

export const listenerTls = z.strictObject({
  cert: z.string().min(1).meta({
    description: 'The certificate chain (PEM file). Reloaded when it changes and on SIGHUP.',
  }),
  key: z.string().min(1).meta({ description: 'The private key of the certificate (PEM file).' }),
  ca: z
    .string()
    .default('')
    .meta({
      description:
        'CA certificates (PEM file) that client certificates must chain to (mutual TLS: a client ' +
        'without a valid certificate is refused in the handshake). Empty: no client certificate is asked for.',
    }),
  minVersion: z
    .enum(['TLSv1.2', 'TLSv1.3'])
    .default('TLSv1.2')
    .meta({ description: 'The oldest TLS version accepted.' }),
});

export const listenerHttp2 = z.strictObject({
  enabled: z.boolean().default(true).meta({
    description: 'Offer HTTP/2 by ALPN next to HTTP/1.1 (TLS listeners only: there is no cleartext h2).',
  }),
  maxConcurrentStreams: positiveInt.default(100).meta({
    description: 'Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).',
  }),
  maxResetBurst: positiveInt.default(200).meta({
    description:
      'Streams a client may cancel (RST_STREAM) in a burst before it is disconnected with GOAWAY ' +
      '(the rapid-reset attack, CVE-2023-44487).',
  }),
  maxResetsPerSecond: positiveInt.default(50).meta({
    description: 'The sustained rate of cancelled streams per connection the burst refills at.',
  }),
});

export const listener = z
  .strictObject({
    name: name.default('public').meta({ description: 'A name for the logs.' }),
    host: z.string().default('0.0.0.0').meta({ description: 'The address to bind ("::" for IPv6).' }),
    port: port.default(8080).meta({ description: 'The port; 0 takes any free port.' }),
    protocol: z.enum(['http', 'https']).default('http').meta({
      description:
        'The scheme put in X-Forwarded-Proto when no trusted proxy states one (always https on a TLS listener).',
    }),
    tls: listenerTls.optional().meta({
      description:
        'Terminate TLS on this listener (HTTP/2 and HTTP/1.1, chosen by ALPN). Absent: plain HTTP/1.1.',
    }),
    http2: listenerHttp2.prefault({}).meta({ description: 'HTTP/2 on a TLS listener.' }),
    ietfHeaders: z.boolean().default(false).meta({
      description:
        'Also send the IETF RateLimit-Policy and RateLimit headers (draft-ietf-httpapi-ratelimit-headers).',
    }),
    mode: z
      .enum(['proxy', 'decision'])
      .default('proxy')
      .meta({
        description:
          "proxy: count and forward requests. decision: forward nothing; answer a proxy's forward-auth or " +
          'auth_request subrequest (the original request in X-Forwarded-Method/-Uri/-Host or X-Original-Method/-URI) ' +
          'with 200 and the X-RateLimit-* headers, or the refusal (docs/forward-auth.md).',
      }),
    onLimited: z
      .union([z.literal(429), z.literal(403)])
      .default(429)
      .meta({
        description:
          'The status of a rate-limited decision (decision listeners only). 403 for nginx auth_request, ' +
          'which turns any other refusal status into 500; the 429 body then comes in X-Tollgate-Error.',
      }),
  })
  .refine((l) => l.mode === 'decision' || l.onLimited === 429, {
    message: 'onLimited applies to decision listeners (mode: decision) only',
    path: ['onLimited'],
  });
