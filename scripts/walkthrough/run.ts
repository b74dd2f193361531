// Executable walkthroughs, the I/O half: each file's steps run in one bash, as a reader pastes
// them, against a fresh gateway of its own (`npm start`'s command and config, a fresh DATA_DIR,
// the in-process store, free ports), and each shown output is compared with the real one.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  firstMissingLine,
  matcherFor,
  matchOutput,
  walkthroughSteps,
  withoutComment,
  type Command,
  type Step,
  findApiKey,
} from './parse.js';

const COMMAND_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 60_000;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A gateway as `npm start` runs it, on free ports, logging to a buffer. */
class Gateway {
  #child: ChildProcess | undefined;
  log = '';
  private constructor(
    private readonly root: string,
    readonly dataDir: string,
    public port: number,
    public adminPort: number,
  ) {}

  static async create(root: string): Promise<Gateway> {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-walkthrough-'));
    return new Gateway(root, dataDir, await freePort(), await freePort());
  }

  /**
   * Starts it; a port taken between freePort() and the gateway's bind (another walkthrough, a
   * test, or the gateway's own embedded services, which bind port 0 first) is not the docs'
   * fault: new ports, up to three tries. The gateway says "address already in use".
   */
  async start(extra: Readonly<Record<string, string>> = {}): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#startOnce(extra);
      } catch (err) {
        if (attempt >= 3 || !/EADDRINUSE|address already in use/.test(this.log)) throw err;
        this.log = '';
        this.port = await freePort();
        this.adminPort = await freePort();
      }
    }
  }

  async #startOnce(extra: Readonly<Record<string, string>>): Promise<void> {
    const child = spawn(process.execPath, ['dist/cli.js', 'start', '--config', 'config/gateway.yaml'], {
      cwd: this.root,
      env: { ...this.env(), CONFIG_WATCH: 'false', ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    child.stdout.on('data', (d: Buffer) => (this.log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (this.log += d.toString()));
    // Ready when /readyz says so (a loaded machine starts slowly: poll, never sleep a guess).
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the gateway exited at start:\n${this.log}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/readyz`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the gateway was not ready in 60 s:\n${this.log}`);
      await delay(100);
    }
  }

  env(): Record<string, string> {
    return {
      ...(process.env as Record<string, string>),
      DATA_DIR: this.dataDir,
      HOST: '127.0.0.1',
      PORT: String(this.port),
      ADMIN_PORT: String(this.adminPort),
    };
  }

  /** The first-start API key: from its log line, or the file a first start may write it to. */
  apiKey(): string | undefined {
    let text = this.log;
    try {
      text += readFileSync(join(this.dataDir, 'first-start.txt'), 'utf8');
    } catch {
      // no such file: the log line has it
    }
    return findApiKey(text);
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** One bash for a file's commands, so variables set by one are seen by the next. */
class Shell {
  readonly #child: ChildProcess;
  #out = '';
  #bg = 0;
  readonly #bgFiles: string[] = [];
  constructor(cwd: string, env: Record<string, string>) {
    this.#child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stdout!.on('data', (d: Buffer) => (this.#out += d.toString()));
    this.#child.stderr!.on('data', (d: Buffer) => (this.#out += d.toString()));
    this.#child.stdin!.write('exec 2>&1\n');
  }

  /** Runs one command; resolves with what it printed (stdout and stderr, as a terminal shows). */
  async run(command: string, background: boolean): Promise<string> {
    const marker = `__walkthrough_${Math.random().toString(36).slice(2)}__`;
    let text = command;
    if (background) {
      const file = join(tmpdir(), `walkthrough-bg-${process.pid}-${++this.#bg}.out`);
      this.#bgFiles.push(file);
      text = `{ ${withoutComment(command).replace(/&$/, '')} ; } > ${file} 2>&1 &`;
    }
    this.#out = '';
    this.#child.stdin!.write(`${text}\nprintf '\\n${marker}\\n'\n`);
    const deadline = Date.now() + COMMAND_TIMEOUT_MS;
    while (!this.#out.includes(`${marker}\n`)) {
      if (Date.now() > deadline) throw new Error(`timed out after 60 s; printed so far:\n${this.#out}`);
      await delay(10);
    }
    // A reader starts the next command once a background one is seen running (a stream opened):
    // its first output is waited for.
    while (background && (statSync(this.#bgFiles.at(-1)!, { throwIfNoEntry: false })?.size ?? 0) === 0) {
      if (Date.now() > deadline) throw new Error('the background command printed nothing in 60 s');
      await delay(10);
    }
    return this.#out.slice(0, this.#out.indexOf(marker)).replace(/\n$/, '');
  }

  /** The output of the block's background commands so far, and they are stopped. */
  async endBackground(): Promise<string[]> {
    await this.run('kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; true', false);
    const outputs = this.#bgFiles.map((f) => readFileSync(f, 'utf8'));
    for (const f of this.#bgFiles) rmSync(f, { force: true });
    this.#bgFiles.length = 0;
    return outputs;
  }

  close(): void {
    this.#child.kill('SIGKILL');
  }
}

export interface WalkthroughResult {
  readonly path: string;
  readonly commands: number;
  readonly compared: number;
  readonly skipped: number;
  readonly problems: readonly string[];
}

/** Rewrites the doc's ports to the gateway's, and carried values to the real ones. */
function asPasted(text: string, gateway: Gateway, carry: ReadonlyMap<string, string>): string {
  let out = text
    .replace(/localhost:8080\b/g, `localhost:${gateway.port}`)
    .replace(/localhost:9091\b/g, `localhost:${gateway.adminPort}`);
  // Longest first: a token holds its id, and a cut value is carried with and without its "…".
  const values = [...carry].sort(([a], [b]) => b.length - a.length);
  for (const [shown, real] of values) out = out.split(shown).join(real);
  return out;
}

/** And the real output's ports back to the doc's. */
function asShown(text: string, gateway: Gateway): string {
  return text
    .replace(new RegExp(`\\b${gateway.port}\\b`, 'g'), '8080')
    .replace(new RegExp(`\\b${gateway.adminPort}\\b`, 'g'), '9091');
}

function describe(path: string, command: Command, shown: string, real: string, missing?: string): string {
  const clip = (s: string) => (s.length > 3000 ? `${s.slice(0, 3000)}…(cut)` : s);
  const first = command.text.split('\n')[0]!;
  return [
    `${path}:${command.line}: the output differs from the one shown`,
    `  command: ${first.length > 160 ? `${first.slice(0, 160)}…` : first}`,
    ...(missing ? [`  first shown line not found (in order): ${missing}`] : []),
    `  shown:\n${indent(shown)}`,
    `  real:\n${indent(clip(real))}`,
  ].join('\n');
}

const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

/**
 * Runs a file's walkthrough against a fresh gateway. `read` gives a file's text (for "first").
 */
export async function runWalkthrough(
  root: string,
  path: string,
  read: (path: string) => string,
): Promise<WalkthroughResult> {
  const steps = expand(path, read, new Set());
  const problems: string[] = [];
  let commands = 0;
  let compared = 0;
  const skipped = steps.filter((s) => s.step.kind === 'skip').length;
  if (!steps.some((s) => s.step.kind === 'block')) {
    return { path, commands, compared, skipped, problems };
  }
  const gateway = await Gateway.create(root);
  let shell: Shell | undefined;
  try {
    await gateway.start();
    const key = gateway.apiKey();
    if (!key) throw new Error(`${path}: no first-start API key in the gateway's log:\n${gateway.log}`);
    // The reader's shell: the gateway's data folder (for the CLI's commands) and the key, not its ports.
    shell = new Shell(root, {
      ...(process.env as Record<string, string>),
      DATA_DIR: gateway.dataDir,
      KEY: key,
    });
    const carry = new Map<string, string>();
    for (const { file, step } of steps) {
      if (step.kind === 'restart') {
        await gateway.stop();
        await gateway.start(step.env);
        continue;
      }
      if (step.kind !== 'block') continue;
      const background: Command[] = [];
      for (const command of step.commands) {
        commands++;
        if (command.background) background.push(command);
        const pasted = asPasted(command.text, gateway, carry);
        if (command.expected === undefined || command.background) {
          await shell.run(pasted, command.background);
          continue;
        }
        compared++;
        const matcher = matcherFor(command.expected);
        // "# within N s": the state it shows settles within N s (a cache's TTL): retried till then.
        const until = Date.now() + (command.within ?? 0) * 2000;
        let real = asShown(await shell.run(pasted, false), gateway);
        let found = matchOutput(matcher, real);
        while (!found && Date.now() < until) {
          await delay(250);
          real = asShown(await shell.run(pasted, false), gateway);
          found = matchOutput(matcher, real);
        }
        if (found) for (const [shown, value] of found) carry.set(shown, value);
        else
          problems.push(describe(file, command, matcher.shown, real, firstMissingLine(matcher, real)?.line));
      }
      if (background.length > 0) {
        const outputs = await shell.endBackground();
        background.forEach((command, i) => {
          if (command.expected === undefined) return;
          compared++;
          const matcher = matcherFor(command.expected);
          const real = asShown(outputs[i] ?? '', gateway);
          if (!matchOutput(matcher, real)) {
            problems.push(
              describe(file, command, matcher.shown, real, firstMissingLine(matcher, real)?.line),
            );
          }
        });
      }
    }
  } catch (err) {
    problems.push(`${path}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    shell?.close();
    await gateway.dispose();
  }
  return { path, commands, compared, skipped, problems };
}

/** A file's steps, with those of the files it runs "first" spliced in where it says so. */
function expand(
  path: string,
  read: (path: string) => string,
  seen: Set<string>,
): { file: string; step: Step }[] {
  if (seen.has(path)) throw new Error(`${path}: "walkthrough: first" goes round in a circle`);
  seen.add(path);
  return walkthroughSteps(path, read(path)).flatMap((step) =>
    step.kind === 'first' ? expand(join(path, '..', step.path), read, seen) : [{ file: path, step }],
  );
}
