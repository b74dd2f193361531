import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BATCH_WINDOW_CORE, BATCH_WINDOW_LUA } from './batch-window-lua.js';

// The batch script as a Redis function (Redis 7+): its library is loaded once per server and each
// call runs only the function, not the definitions of its dozen helpers and constants again, which
// an EVALSHA of the same Lua does on every call. Where Redis has no functions it runs as a script.

/** Names a version of the library: a gateway of another version loads its own beside it. */
const VERSION = createHash('sha1').update(BATCH_WINDOW_CORE).digest('hex').slice(0, 16);

/** The library's name (FUNCTION LIST, FUNCTION DELETE): one per gateway version. */
export const BATCH_LIBRARY_NAME = `tollgate_${VERSION}`;

/** The function's name: function names are global to a server, so it is versioned too. */
export const BATCH_FUNCTION = `tollgate_batch_${VERSION}`;

/** The library, as FUNCTION LOAD takes it. */
export const BATCH_LIBRARY = `#!lua name=${BATCH_LIBRARY_NAME}
${BATCH_WINDOW_CORE}
redis.register_function('${BATCH_FUNCTION}', batch)
`;

const SCRIPT_SHA = createHash('sha1').update(BATCH_WINDOW_LUA).digest('hex');

/** The function is not on that server (restarted empty, FUNCTION FLUSH, a new master): load it. */
const NOT_LOADED = /^ERR (?:Function|Library) not found/;

/** This server cannot run functions for us: Redis < 7, FUNCTION renamed away, or no ACL permission. */
const NO_FUNCTIONS = /^(?:ERR unknown command|NOPERM .*'(?:fcall|function(?:\|load)?)')/i;

/** A cluster's refusals, left after ioredis' own redirections: the call did not run, so one more cannot count twice. */
const REDIRECTED = /^(?:MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

type Args = readonly [number, ...(string | number)[]];

/**
 * Runs the batch script on one Redis or a Redis Cluster: FCALL of the library's function, loaded
 * (FUNCTION LOAD REPLACE, on every master) when a server answers that it does not have it, and the
 * call sent once more; a server without functions (the first FCALL or FUNCTION LOAD refused as an
 * unknown command or by the ACL) turns this runner to EVALSHA for good, EVAL when Redis does not
 * know the script (NOSCRIPT). Each retry follows an error that says the call did not run.
 */
export class BatchScriptRunner {
  #functions = true;
  #loading: Promise<unknown> | undefined;

  /** `masters`: the servers to load the library on (a cluster's masters, or the one server). */
  constructor(
    private readonly client: Redis | Cluster,
    private readonly masters: () => readonly Redis[],
  ) {}

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
    if (this.#noFunctions(err)) return this.#runScript(args);
    if (REDIRECTED.test(messageOf(err))) return this.#call(args);
    if (!NOT_LOADED.test(messageOf(err))) throw err;
    const loadError = await this.#load();
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
   * Loads the library on every master, once for the calls that found it missing together; resolves
   * the first master's error, if any (a master that is down fails its load, not the others').
   */
  #load(): Promise<unknown> {
    this.#loading ??= Promise.allSettled(
      this.masters().map((node) => node.call('FUNCTION', 'LOAD', 'REPLACE', BATCH_LIBRARY)),
    ).then((loads) => {
      this.#loading = undefined;
      return loads.find((l) => l.status === 'rejected')?.reason;
    });
    return this.#loading;
  }
}
