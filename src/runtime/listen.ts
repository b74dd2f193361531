import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { GatewayConfig } from '../config/schema.js';

/** A socket the gateway binds: its address, and what it is for ("public listener", "admin listener"). */
export interface ListenTarget {
  readonly host: string;
  readonly port: number;
  readonly what: string;
}

/** Every socket a gateway of `config` binds: its public listeners, the admin one, Envoy's rate-limit service. */
export function listenTargets(config: GatewayConfig): ListenTarget[] {
  const { admin, rateLimitService } = config;
  return [
    ...config.listeners.map((l) => ({ host: l.host, port: l.port, what: `${l.name} listener` })),
    ...(admin ? [{ host: admin.host, port: admin.port, what: 'admin listener' }] : []),
    ...(rateLimitService
      ? [{ host: rateLimitService.host, port: rateLimitService.port, what: 'rate-limit service' }]
      : []),
  ];
}

/** A socket that could not be bound: the message names the address and the listener, in one line. */
export class ListenError extends Error {
  constructor(
    readonly target: ListenTarget,
    readonly code: string | undefined,
  ) {
    super(`cannot listen on ${addressOf(target)} (${target.what}): ${reasonOf(code)}`);
    this.name = 'ListenError';
  }
}

const addressOf = ({ host, port }: ListenTarget) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this machine',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'unknown host',
};

const reasonOf = (code: string | undefined) => (code && REASONS[code]) ?? code ?? 'failed';

/** Binds `server` to the target; a failure is a ListenError. */
export async function listen(server: Server, target: ListenTarget): Promise<void> {
  server.listen(target.port, target.host);
  try {
    await once(server, 'listening');
  } catch (err) {
    throw new ListenError(target, (err as NodeJS.ErrnoException).code);
  }
}

/**
 * Binds every fixed-port target at once, then lets them go again: a port taken by another
 * process (or named twice) fails here, before anything else has started. Targets with port 0
 * take any free port, so they cannot fail this way.
 */
export async function checkPortsFree(targets: readonly ListenTarget[]): Promise<void> {
  const probes: Server[] = [];
  try {
    for (const target of targets) {
      if (target.port === 0) continue;
      const probe = createServer();
      probes.push(probe);
      await listen(probe, target);
    }
  } finally {
    await Promise.all(probes.map((p) => (p.listening ? new Promise((r) => p.close(r)) : undefined)));
  }
}
