import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { waitFor } from './wait.js';

/**
 * A shipped proxy example (docs/examples/) pointed at a test's servers: its decision listener
 * (127.0.0.1:8081) and application (127.0.0.1:3000) addresses replaced.
 */
export function exampleFor(text: string, decision: string, app: string): string {
  for (const marker of ['127.0.0.1:8081', '127.0.0.1:3000']) {
    if (!text.includes(marker)) throw new Error(`the example names no ${marker}`);
  }
  return text.replaceAll('127.0.0.1:8081', decision).replaceAll('127.0.0.1:3000', app);
}

/** True when 127.0.0.1:`port` accepts a connection. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Waits until a proxy process (nginx, Caddy) accepts connections on its port; throws with its
 * stderr and `log()` if it exits first.
 */
export async function untilListening(child: ChildProcess, port: number, log: () => string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  await waitFor(async () => exited() || (await accepts(port)), Boolean, {
    what: `${child.spawnfile} to listen on ${port}`,
  });
  if (exited()) throw new Error(`${child.spawnfile} exited (${child.exitCode}): ${stderr}\n${log()}`);
}

/** A proxy (nginx, Caddy) run by a test in the foreground, on 127.0.0.1:`port`, with a temp dir of its own. */
export abstract class ProxyProcess {
  protected constructor(
    readonly port: number,
    readonly dir: string,
    protected readonly child: ChildProcess,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The proxy's log, for a failure message. */
  abstract log(): string;

  /** Waits until `proxy` listens; stops it and throws if it exits first. */
  protected static async listening<P extends ProxyProcess>(proxy: P): Promise<P> {
    try {
      await untilListening(proxy.child, proxy.port, () => proxy.log());
    } catch (err) {
      await proxy.stop();
      throw err;
    }
    return proxy;
  }

  /** Stops at once (SIGTERM), waits for the exit, removes the temp dir. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      await once(this.child, 'exit');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
