// Turns a V8 .cpuprofile of tollgate under load into CPU µs per request per step of the request
// path. Each sample's time goes to the step of the nearest frame, itself or above it, that is
// tollgate's code (dist/<folder>/) or a library (node_modules/<package>/): so Node internals and
// native calls count for whoever called them (a socket write made by undici is relaying, one made
// by ioredis is the store). Samples with no such frame above are Node's own HTTP server work.
// An estimate: sampling misses short calls, and the profiler only sees the main thread.

const STEP_OF_FOLDER = new Map([
  ['routing', 'route'],
  ['identity', 'identity'],
  ['limits', 'plan/decide'],
  ['store', 'store (tollgate code)'],
  ['proxy', 'headers/relay (tollgate code)'],
  ['metrics', 'metrics'],
  ['http', 'request handler and responses'],
  ['config', 'config'],
]);

const STEP_OF_PACKAGE = new Map([
  ['ioredis', 'store (ioredis, Redis protocol)'],
  ['@ioredis', 'store (ioredis, Redis protocol)'],
  ['redis-parser', 'store (ioredis, Redis protocol)'],
  ['redis-errors', 'store (ioredis, Redis protocol)'],
  ['standard-as-callback', 'store (ioredis, Redis protocol)'],
  ['cluster-key-slot', 'store (ioredis, Redis protocol)'],
  ['denque', 'store (ioredis, Redis protocol)'],
  ['undici', 'headers/relay (undici)'],
  ['prom-client', 'metrics'],
  ['tdigest', 'metrics'],
  ['bintrees', 'metrics'],
  ['pino', 'logging'],
]);

// Helpers whose time belongs to whoever called them (the over-limit cache, client-IP parsing).
const TRANSPARENT = new Set(['lru-cache', 'ipaddr.js']);

/** The step a frame belongs to by its script URL, or undefined for Node internals and natives. */
export function stepOfUrl(url) {
  if (!url) return undefined;
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) {
    const name = pkg[1];
    if (TRANSPARENT.has(name)) return undefined;
    const step = STEP_OF_PACKAGE.get(name) ?? STEP_OF_PACKAGE.get(name.split('/')[0]);
    return step ?? `library ${name}`;
  }
  const own = /\/dist\/([^/]+)\//.exec(url);
  if (own) return STEP_OF_FOLDER.get(own[1]) ?? `tollgate ${own[1]}`;
  if (/\/dist\/[^/]+\.js$/.test(url)) return 'tollgate (entry)';
  return undefined;
}

const NODE_ONLY = 'Node HTTP server, sockets, timers (no tollgate or library frame above)';

const SPECIAL = new Map([
  ['(idle)', 'idle'],
  ['(garbage collector)', 'garbage collection'],
  ['(program)', 'V8/native outside JS'],
  ['(root)', 'V8/native outside JS'],
]);

/**
 * Step of every node: its own URL's step, else its nearest ancestor's, else a fallback by kind.
 * Map id → { step, beneath } where beneath is true when the step was inherited (the node is Node
 * internals or a native function the step's code called).
 */
function stepsOfNodes(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map();
  const stepOf = (id) => {
    if (memo.has(id)) return memo.get(id);
    const node = byId.get(id);
    const { functionName, url } = node.callFrame;
    const own = SPECIAL.get(functionName) ?? stepOfUrl(url);
    let result = { step: own, beneath: false };
    if (own === undefined) {
      const up = parent.get(id);
      const inherited = up === undefined ? undefined : stepOf(up).step;
      result =
        inherited &&
        !inherited.startsWith('V8/') &&
        inherited !== 'idle' &&
        !inherited.startsWith('Node HTTP')
          ? { step: inherited, beneath: true }
          : { step: NODE_ONLY, beneath: false };
    }
    memo.set(id, result);
    return result;
  };
  return new Map(nodes.map((n) => [n.id, stepOf(n.id)]));
}

/**
 * Self time per step in the profile, restricted to samples taken in [fromUs, toUs] (V8's
 * timestamps are CLOCK_MONOTONIC µs, as process.hrtime). Returns { steps: [{ step, us, beneathUs }],
 * busyUs, idleUs, samples, windowed } (beneathUs: the part spent in Node internals and natives
 * that the step's code called) where windowed is false if no sample fell in the window (then the
 * whole profile was used).
 */
export function summariseProfile(profile, fromUs, toUs) {
  const stepOfNode = stepsOfNodes(profile.nodes);
  const { samples, timeDeltas } = profile;
  const times = new Array(samples.length);
  let t = profile.startTime;
  for (let i = 0; i < samples.length; i++) times[i] = t += timeDeltas[i];
  const collect = (inWindow) => {
    const totals = new Map();
    let count = 0;
    for (let i = 0; i < samples.length; i++) {
      if (!inWindow(times[i])) continue;
      // A sample stands for the time until the next one.
      const span = i + 1 < samples.length ? times[i + 1] - times[i] : 0;
      const { step, beneath } = stepOfNode.get(samples[i]);
      const total = totals.get(step) ?? { us: 0, beneathUs: 0 };
      total.us += span;
      if (beneath) total.beneathUs += span;
      totals.set(step, total);
      count++;
    }
    return { totals, count };
  };
  let windowed = true;
  let { totals, count } = collect((ts) => ts >= fromUs && ts <= toUs);
  if (count === 0) {
    windowed = false;
    ({ totals, count } = collect(() => true));
  }
  const idleUs = totals.get('idle')?.us ?? 0;
  totals.delete('idle');
  const steps = [...totals].map(([step, t]) => ({ step, ...t })).sort((a, b) => b.us - a.us);
  const busyUs = steps.reduce((n, s) => n + s.us, 0);
  return { steps, busyUs, idleUs, samples: count, windowed };
}
