import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep, waitFor } from './wait.js';

/**
 * The compiled CLI. The integration project's global setup (test/setup/build-once.ts) builds it
 * from the sources under test before any test runs, so a process starts without compiling anything.
 */
export const CLI_ENTRY = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface CliOptions {
  /** Added to this process's environment. */
  readonly env?: Record<string, string>;
  /** Relative paths in the arguments (config/gateway.yaml) are resolved from here; default: this process's. */
  readonly cwd?: string;
  /** The bound on the wait: for a short command, its whole run; for a long-running one, until it listens. */
  readonly timeoutMs?: number;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One JSON log line (pino) of a tollgate process. */
export type LogLine = Record<string, unknown> & { msg?: string };

const spawnCli = (args: readonly string[], { env = {}, cwd }: CliOptions): ChildProcess =>
  spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** Runs one short command (check, explain, users, tokens) to its end; throws if it outlives `timeoutMs`. */
export async function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const child = spawnCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': by then every byte the command wrote has been read.
  const closed = once(child, 'close') as Promise<[number | null]>;
  const result = await Promise.race([closed, sleep(timeoutMs).then(() => undefined)]);
  if (!result) {
    child.kill('SIGKILL');
    await closed;
    throw new Error(`tollgate ${args.join(' ')} did not exit within ${timeoutMs} ms`);
  }
  return { code: result[0], stdout, stderr };
}

export interface StartOptions extends CliOptions {
  /** Public listeners to wait for: one per worker process (`workers: N`). */
  readonly listeners?: number;
  /** Wait for the admin listener too. */
  readonly admin?: boolean;
}

const isListening = (line: LogLine) => line.msg === 'listening';
const isAdmin = (line: LogLine) => line['listener'] === 'admin';

/**
 * A long-running tollgate command (`start`, `serve`) as a real process. Its JSON log (stdout) is
 * collected; its addresses are read from its "listening" lines, so configs can ask for port 0.
 * It is killed if the test process exits without stopping it.
 */
export class CliProcess {
  #stdout = '';
  #stderr = '';
  /**
   * Resolves once the process has exited and its output is read in full ('close'), with its code
   * (null when a signal ended it) and that signal.
   */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #killOnExit = () => {
    if (this.running) this.child.kill('SIGKILL');
  };

  private constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (d: Buffer) => (this.#stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    this.exit = (once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>).then(
      ([code, signal]) => ({ code, signal }),
    );
    process.once('exit', this.#killOnExit);
  }

  /** Spawns the command and waits (bounded) until it listens: its public listener(s), and the admin one if asked. */
  static async start(args: readonly string[], options: StartOptions = {}): Promise<CliProcess> {
    const { listeners = 1, admin = false, timeoutMs = 20_000 } = options;
    const cli = new CliProcess(spawnCli(args, options));
    try {
      await cli.waitForLog((l) => isListening(l) && !isAdmin(l), {
        count: listeners,
        timeoutMs,
        what: `${args.join(' ')} to listen`,
      });
      if (admin)
        await cli.waitForLog((l) => isListening(l) && isAdmin(l), { timeoutMs, what: 'the admin listener' });
    } catch (err) {
      await cli.stop();
      throw err;
    }
    return cli;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
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

  /** Waits until `count` lines match; fails at once if the process exits first. */
  async waitForLog(
    match: (line: LogLine) => boolean,
    { count = 1, timeoutMs = 20_000, what = 'a log line' } = {},
  ): Promise<LogLine[]> {
    return waitFor(
      () => {
        const lines = this.logs().filter(match);
        if (lines.length < count && !this.running) {
          throw new Error(`tollgate exited before ${what}:\n${this.#stdout}${this.#stderr}`);
        }
        return lines;
      },
      (lines) => lines.length >= count,
      { timeoutMs, what },
    );
  }

  /** The (first) public listener's address. */
  get url(): string {
    const line = this.logs().find((l) => isListening(l) && !isAdmin(l));
    if (!line) throw new Error('not listening');
    return typeof line['url'] === 'string' ? line['url'] : `http://127.0.0.1:${String(line['port'])}`;
  }

  /** The admin listener's address. */
  get adminUrl(): string {
    const line = this.logs().find((l) => isListening(l) && isAdmin(l));
    if (!line) throw new Error('no admin listener');
    return String(line['url']);
  }

  /**
   * The inotify instances the process holds (Linux): one from its first fs.watch on, none before.
   * Zero proves the process watches no file, where waiting for a reload that never comes could not.
   */
  fileWatches(): number {
    const fds = `/proc/${this.child.pid}/fd`;
    return readdirSync(fds).filter((fd) => {
      try {
        return readlinkSync(join(fds, fd)) === 'anon_inode:inotify';
      } catch {
        return false; // closed since it was listed
      }
    }).length;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code (null if killed). */
  async stop(graceMs = 5000): Promise<number | null> {
    process.off('exit', this.#killOnExit);
    if (!this.running) return (await this.exit).code;
    this.child.kill('SIGTERM');
    const exited = await Promise.race([this.exit, sleep(graceMs).then(() => undefined)]);
    if (exited) return exited.code;
    this.child.kill('SIGKILL');
    await this.exit;
    return null;
  }
}

/** Starts a long-running command (`serve websites ...`) and waits until it listens. */
export const startCli = (args: readonly string[], options: StartOptions = {}): Promise<CliProcess> =>
  CliProcess.start(args, options);

/** `tollgate start --config FILE`, listening. */
export const startGatewayProcess = (configFile: string, options: StartOptions = {}): Promise<CliProcess> =>
  CliProcess.start(['start', '--config', configFile], options);
