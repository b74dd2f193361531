import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

/** A throw-away redis-server on a free port, owned by one test file. */
export class RedisServer {
  #child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly args: readonly string[],
  ) {}

  /** `args`: more redis-server options (`--rename-command FUNCTION ""`, say). */
  static async start(port?: number, args: readonly string[] = []): Promise<RedisServer> {
    // A free port can be taken before redis-server binds it: then try another.
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(port ?? (await freePort()), args);
      try {
        await server.restart();
        return server;
      } catch (err) {
        await server.kill();
        if (port !== undefined || attempt === 3) throw err;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, and waits until it answers PING. */
  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        ...this.args,
      ],
      { stdio: 'ignore' },
    );
    this.#child = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      const probe = new Redis(this.url, {
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
      });
      probe.on('error', () => {}); // refused until the server is up
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        if (Date.now() > deadline) throw new Error('redis-server did not start');
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        probe.disconnect();
      }
    }
  }

  /** Kills the process (SIGKILL by default) and waits for it to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await once(child, 'exit');
  }

  /** A plain client for inspecting keys from a test. */
  client(): Redis {
    return new Redis(this.url, { maxRetriesPerRequest: 1 });
  }

  /** Freezes the process (SIGSTOP): it keeps every connection open and answers nothing until thawed. */
  freeze(): FrozenRedis {
    const child = this.#child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) {
      throw new Error('redis-server is not running');
    }
    child.kill('SIGSTOP');
    let frozen = true;
    return {
      thaw() {
        if (!frozen) return;
        frozen = false;
        child.kill('SIGCONT');
      },
    };
  }
}

/** A redis-server frozen with SIGSTOP. */
export interface FrozenRedis {
  /** Sends SIGCONT. Safe to call more than once. */
  thaw(): void;
}

/**
 * Script executions Redis has run so far (FCALL, EVALSHA and EVAL, every outcome), from INFO commandstats.
 * The store runs one script per round trip (a batch of requests), so a difference of this count is
 * the round trips between.
 */
export async function scriptCalls(client: Redis): Promise<number> {
  return scriptCallsIn(await client.info('commandstats'));
}

/** Script executions counted in the text of an INFO commandstats reply (of one node of a cluster, say). */
export function scriptCallsIn(info: string): number {
  let total = 0;
  for (const command of ['fcall', 'evalsha', 'eval']) {
    const line = new RegExp(`^cmdstat_${command}:(.*)$`, 'm').exec(info)?.[1];
    if (!line) continue;
    for (const field of ['calls', 'rejected_calls', 'failed_calls']) {
      const value = new RegExp(`(?:^|,)${field}=(\\d+)`).exec(line)?.[1];
      total += Number(value ?? 0);
    }
  }
  return total;
}
