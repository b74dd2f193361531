// Groups a callgrind_annotate --inclusive=yes listing (bench/callgrind-gateway.js writes one per
// run) into the Redis path's steps: thousands of inclusive instructions per request (per call with
// CALLS), each row the largest inclusive cost among the functions that match it (inclusive costs
// nest, so a step is its outermost function, not a sum). Prints the top functions too (TOP).
//
// JIT code shows in callgrind as ???:0x<address>: named from V8's perf map (node --perf-basic-prof
// writes /tmp/perf-<pid>.map), the latest code object that starts at the address.
//
//   node bench/callgrind-steps.js LISTING PERF_MAP REQUESTS [CALLS]   (PERF_MAP -: none)
import { readFileSync } from 'node:fs';

const [file, mapFile, requestsArg, callsArg] = process.argv.slice(2);
const requests = Number(requestsArg);
const calls = Number(callsArg ?? 0);
const jitNames = new Map();
for (const line of mapFile === '-' ? [] : readFileSync(mapFile, 'utf8').split('\n')) {
  const m = /^([0-9a-f]+) [0-9a-f]+ (.*)$/.exec(line);
  if (m) jitNames.set(BigInt(`0x${m[1]}`), m[2]);
}
const rows = [];
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(?:\*\s+)?(.+)$/.exec(line);
  if (!m) continue;
  let name = m[2];
  const jit = /^\?\?\?:0x([0-9a-f]+)/.exec(name);
  if (jit) name = jitNames.get(BigInt(`0x${jit[1]}`)) ?? name;
  rows.push({ ir: Number(m[1].replace(/,/g, '')), name });
}

// Each step: the patterns whose functions make it up (the largest inclusive match counts).
const STEPS = [
  ['GC (Heap::CollectGarbage)', [/Heap::CollectGarbage\(/]],
  [
    'store hit (BatchingStore.hit, the request joins a batch)',
    [/batching-store\.js.*\bhit\b|\bhit\b.*batching-store\.js/],
  ],
  ['turn end (runTurnEnd: batch flushed and written)', [/runTurnEnd/]],
  ['  batch args built (batchScriptArgs, runLengths)', [/batchScriptArgs/, /runLengths/]],
  [
    '  ioredis command built and written (Script.execute/sendCommand)',
    [/\bexecute\b.*ioredis|ioredis.*\bexecute\b/, /sendCommand/],
  ],
  ['  ... toWritable (RESP text)', [/toWritable/]],
  ['  deadline timer (setTimeout)', [/batching-store\.js.*#flush|#flush/]],
  ['reply: socket data to settle (ioredis decoder write)', [/decoder\.js.*\bwrite\b|\bwrite\b.*decoder\.js/]],
  ['  ... returnReply (command resolved)', [/returnReply/]],
  ['reply parsed (parseBatchReply, readRun)', [/parseBatchReply/, /readRun/]],
  ['settle per request (#settle)', [/#settle/]],
  ['  ... store round-trip histogram', [/storeRoundTrip/]],
  ['microtasks (RunMicrotasks)', [/RunMicrotasks|MicrotaskQueue::RunMicrotasks/]],
  ['timers (processTimers / listOnTimeout)', [/processTimers|listOnTimeout/]],
  ['immediates (processImmediate)', [/processImmediate/]],
];
const perReq = (ir) => (ir / requests / 1000).toFixed(2);
const perCall = (ir) => (calls > 0 ? (ir / calls / 1000).toFixed(1) : '');
console.log(`| step | k instr/request | k instr/call | function |`);
console.log(`| --- | ---: | ---: | --- |`);
for (const [step, patterns] of STEPS) {
  let best;
  for (const r of rows) if (patterns.some((p) => p.test(r.name)) && (!best || r.ir > best.ir)) best = r;
  console.log(
    `| ${step} | ${best ? perReq(best.ir) : '-'} | ${best ? perCall(best.ir) : ''} | ${best ? best.name.slice(0, 90) : ''} |`,
  );
}
const top = Number(process.env.TOP ?? 0);
if (top > 0) {
  console.log('\nTop inclusive functions matching FILTER:');
  const filter = new RegExp(process.env.FILTER ?? '.');
  for (const r of rows.filter((r) => filter.test(r.name)).slice(0, top))
    console.log(`${perReq(r.ir).padStart(9)}  ${r.name.slice(0, 160)}`);
}
