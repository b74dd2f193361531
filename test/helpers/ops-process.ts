import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { sleep, waitFor } from './resilience-wait.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** One JSON log line of the gateway (pino). */
export type LogLine = Record<string, unknown> & { msg?: string };

/**
 * `tollgate start --config FILE` as a real process. Its JSON log (stdout) is collected; the public
 * and admin addresses are read from its "listening" lines, so the config can ask for port 0.
 */
export class GatewayProcess {
  #stdout = '';
  #stderr = '';
  readonly #killOnExit = () => {
    if (alive(this.child)) this.child.kill('SIGKILL');
  };

  private constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (d: Buffer) => (this.#stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    process.once('exit', this.#killOnExit);
  }

  /** Spawns the process and waits (bounded) until the public listener, and the admin one if configured, listen. */
  static async start(
    configFile: string,
    env: Record<string, string> = {},
    { admin = false, timeoutMs = 20_000 } = {},
  ): Promise<GatewayProcess> {
    const child = spawn(process.execPath, [...CLI, 'start', '--config', configFile], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const gp = new GatewayProcess(child);
    try {
      await waitFor(
        () => {
          if (!alive(child)) throw new Error(`tollgate start exited early:\n${gp.#stdout}${gp.#stderr}`);
          return gp.logs();
        },
        (logs) =>
          logs.some((l) => l.msg === 'listening' && l['listener'] !== 'admin') &&
          (!admin || logs.some((l) => l.msg === 'listening' && l['listener'] === 'admin')),
        { timeoutMs, what: 'tollgate start to listen' },
      );
    } catch (err) {
      await gp.stop();
      throw err;
    }
    return gp;
  }

  /** Every complete JSON line logged so far. */
  logs(): LogLine[] {
    const out: LogLine[] = [];
    for (const line of this.#stdout.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // the last line may still be incomplete
      }
    }
    return out;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** The public listener's address. */
  get url(): string {
    const line = this.logs().find((l) => l.msg === 'listening' && l['listener'] !== 'admin');
    if (!line) throw new Error('not listening');
    return `http://127.0.0.1:${String(line['port'])}`;
  }

  /** The admin listener's address. */
  get adminUrl(): string {
    const line = this.logs().find((l) => l.msg === 'listening' && l['listener'] === 'admin');
    if (!line) throw new Error('no admin listener');
    return String(line['url']);
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code (null if killed). */
  async stop(graceMs = 5000): Promise<number | null> {
    process.off('exit', this.#killOnExit);
    if (!alive(this.child)) return this.child.exitCode;
    const exited = once(this.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    this.child.kill('SIGTERM');
    const result = await Promise.race([exited, sleep(graceMs).then(() => undefined)]);
    if (result) return result[0];
    this.child.kill('SIGKILL');
    await Promise.race([exited, sleep(graceMs)]);
    return null;
  }
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one short tollgate command (check, explain, users, tokens) to its end, bounded by `timeoutMs`. */
export async function runCli(
  args: string[],
  timeoutMs = 20_000,
  env: Record<string, string> = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const result = await Promise.race([exited, sleep(timeoutMs).then(() => undefined)]);
  if (!result) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`tollgate ${args.join(' ')} did not exit within ${timeoutMs} ms`);
  }
  return { code: result[0], stdout, stderr };
}

/** Replaces a file the way editors and config-map mounts do: write a sibling, then rename it over. */
export async function replaceFile(file: string, text: string): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.tmp`);
  await writeFile(temp, text);
  await rename(temp, file);
}
