import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BATCH_WINDOW_CORE, BATCH_WINDOW_LUA } from './batch-window-lua.js';

// The batch script as a Redis function (Redis 7+): its library is loaded once per server and each
// call runs only the function, not the definitions of its dozen helpers and constants again, which
// an EVALSHA of the same Lua does on every call. Where Redis has no functions it runs as a script.

/** The library, as FUNCTION LOAD takes it, for a version. */
const library = (version: string) => `#!lua name=tollgate_${version}
${BATCH_WINDOW_CORE}
redis.register_function('tollgate_batch_${version}', batch)
`;

/**
 * Names a version of the library (all its text, the registration too): a gateway of another
 * version loads its own beside it, and REPLACE never changes a library a running gateway calls.
 */
const VERSION = createHash('sha1').update(library('')).digest('hex').slice(0, 16);

/** The library's name (FUNCTION LIST, FUNCTION DELETE): one per gateway version. */
export const BATCH_LIBRARY_NAME = `tollgate_${VERSION}`;

/** The function's name: function names are global to a server, so it is versioned too. */
export const BATCH_FUNCTION = `tollgate_batch_${VERSION}`;

export const BATCH_LIBRARY = library(VERSION);

const SCRIPT_SHA = createHash('sha1').update(BATCH_WINDOW_LUA).digest('hex');

/** The function is not on that server (restarted empty, FUNCTION FLUSH, a new master): load it. */
const NOT_LOADED = /^ERR (?:Function|Library) not found/;

/** This server cannot run functions for us: Redis < 7, FUNCTION renamed away, or no ACL permission. */
const NO_FUNCTIONS = /^(?:ERR unknown command|NOPERM .*'(?:fcall|function(?:\|load)?)')/i;

/**
 * Out of memory (maxmemory, noeviction): Redis refuses a function that may write before it runs,
 * where a script fails only at its first write, so a batch that refuses every request still runs
 * as a script. That one call goes as a script; functions stay on.
 */
const OUT_OF_MEMORY = /^OOM /;

/** A cluster's refusals, left after ioredis' own redirections: the call did not run, so one more cannot count twice. */
const REDIRECTED = /^(?:MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export type Args = readonly [number, ...(string | number)[]];

/**
 * Runs the batch script on one Redis or a Redis Cluster: FCALL of the library's function, loaded
 * (FUNCTION LOAD REPLACE, on the call's master) when a server answers that it does not have it,
 * and the call sent once more (as a script when Redis is out of memory); a server without functions (the first FCALL or FUNCTION LOAD refused as an
 * unknown command or by the ACL) turns this runner to EVALSHA for good, EVAL when Redis does not
 * know the script (NOSCRIPT). Each retry follows an error that says the call did not run.
 */
export class BatchScriptRunner {
  #functions: boolean;
  /** Loads in flight, by server: calls that found one server without the library share its load. */
  readonly #loading = new Map<Redis, Promise<unknown>>();

  /**
   * `serversFor`: the servers to load the library on for a call (the master of its key's slot, or
   * every master when the slot map does not say; the one server).
   */
  constructor(
    private readonly client: Redis | Cluster,
    private readonly serversFor: (args: Args) => readonly Redis[],
    /** False: EVALSHA from the start (store.redis.functions), for a server or proxy this runner cannot tell apart. */
    functions = true,
  ) {
    this.#functions = functions;
  }

  /** Whether calls go as FCALL (false once the server was found without functions). */
  get functions(): boolean {
    return this.#functions;
  }

  run(args: Args): Promise<unknown[]> {
    if (!this.#functions) return this.#runScript(args);
    return this.#call(args).catch((err: unknown) => this.#recover(err, args));
  }

  #call(args: Args): Promise<unknown[]> {
    return this.client.fcall(BATCH_FUNCTION, ...args) as Promise<unknown[]>;
  }

  /** After a failed FCALL: once more when it did not run, loaded first when it was missing. */
  async #recover(err: unknown, args: Args): Promise<unknown[]> {
    if (this.#noFunctions(err) || OUT_OF_MEMORY.test(messageOf(err))) return this.#runScript(args);
    if (REDIRECTED.test(messageOf(err))) return this.#call(args);
    if (!NOT_LOADED.test(messageOf(err))) throw err;
    const loadError = await this.#load(args);
    if (this.#noFunctions(loadError)) return this.#runScript(args);
    try {
      return await this.#call(args);
    } catch (again) {
      // Still missing: why the load failed (READONLY on a replica, say) says more.
      throw loadError !== undefined && NOT_LOADED.test(messageOf(again)) ? loadError : again;
    }
  }

  /** EVALSHA, then EVAL when the server does not know the script or the cluster redirected it. */
  async #runScript(args: Args): Promise<unknown[]> {
    try {
      return (await this.client.evalsha(SCRIPT_SHA, ...args)) as unknown[];
    } catch (err) {
      const message = messageOf(err);
      if (!message.startsWith('NOSCRIPT ') && !REDIRECTED.test(message)) throw err;
    }
    return (await this.client.eval(BATCH_WINDOW_LUA, ...args)) as unknown[];
  }

  /** Turns to EVALSHA when `err` says the server has no functions for us; whether it did. */
  #noFunctions(err: unknown): boolean {
    if (err === undefined || !NO_FUNCTIONS.test(messageOf(err))) return false;
    this.#functions = false;
    return true;
  }

  /**
   * Loads the library on the call's servers, each once for the calls that found it missing
   * together, so a server that does not answer holds up only the calls of its own slots; resolves
   * the first server's error, if any.
   */
  async #load(args: Args): Promise<unknown> {
    const loads = await Promise.allSettled(this.serversFor(args).map((node) => this.#loadOn(node)));
    return loads.find((l) => l.status === 'rejected')?.reason;
  }

  #loadOn(node: Redis): Promise<unknown> {
    let loading = this.#loading.get(node);
    if (loading === undefined) {
      loading = node
        .call('FUNCTION', 'LOAD', 'REPLACE', BATCH_LIBRARY)
        .finally(() => this.#loading.delete(node));
      this.#loading.set(node, loading);
    }
    return loading;
  }
}
