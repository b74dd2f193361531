// Instruction counts of a server under valgrind's callgrind, which do not move with the host's load
// (the same binary and input count the same within a few per cent), and their split into groups by
// function: OpenSSL, nghttp2, node's native HTTP/2, the garbage collector, other V8 and node C++,
// and JIT code by the script it came from (node --perf-basic-prof's map, /tmp/perf-<pid>.map).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** valgrind's arguments: nothing counted until `instrument(pid, true)`, every thread in one file. */
export function callgrindArgs(outFile) {
  return ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outFile}`];
}

/** Switches instrumentation on or off in a running callgrind process. */
export async function instrument(pid, on) {
  await run('callgrind_control', ['-i', on ? 'on' : 'off', String(pid)]);
}

/** Writes what was counted since the last dump to <outFile>.<n> and zeroes the counters. */
export async function dump(pid) {
  await run('callgrind_control', ['-d', String(pid)]);
}

/** Total instructions (Ir) of one dump file. */
export function totalOf(file) {
  const m = /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`${file}: no summary line`);
  return Number(m[1]);
}

/** The JIT's code ranges from V8's perf map, sorted by start: [{ start, end, name }]. */
function perfMap(pid) {
  const file = `/tmp/perf-${pid}.map`;
  if (!existsSync(file)) return [];
  const out = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = parseInt(m[1], 16);
    out.push({ start, end: start + parseInt(m[2], 16), name: m[3], order: out.length });
  }
  return out.sort((a, b) => a.start - b.start || a.order - b.order);
}

/** The perf-map entry holding an address (the one written last, as code space is reused). */
function lookup(map, address) {
  let lo = 0;
  let hi = map.length - 1;
  let found;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid].start <= address) {
      lo = mid + 1;
    } else hi = mid - 1;
  }
  for (let i = hi; i >= 0 && i > hi - 64; i--) {
    const e = map[i];
    if (e.start <= address && address < e.end && (!found || e.order > found.order)) found = e;
  }
  return found;
}

/** The group of a JIT function, by the script its perf-map name ends with. */
function scriptGroup(name) {
  if (/\/dist\/runtime\/tls\/|\/dist\/proxy\/stream-request/.test(name)) return 'JS: ours, HTTP/2 adapters';
  if (/\/dist\//.test(name)) return 'JS: ours, request path';
  if (/node_modules\/undici/.test(name)) return 'JS: undici';
  if (/node_modules\//.test(name)) return 'JS: other packages';
  if (/node:internal\/http2\//.test(name)) return 'JS: node http2';
  if (/node:(_tls|tls|internal\/tls)/.test(name)) return 'JS: node tls';
  if (/node:(_http|https|http\b|internal\/http)/.test(name)) return 'JS: node http';
  if (/node:/.test(name)) return 'JS: node core (streams, events, net, timers)';
  return 'JS: V8 stubs and regexps';
}

/** OpenSSL's symbols (node links it statically), and node's TLS glue. */
const TLS_SYMBOL =
  /node::crypto::|^(SSL|ssl|tls|EVP|ossl|OSSL|OPENSSL|CRYPTO|BIO|ERR_|bn_|BN_|aes|AES|gcm|GCM|ghash|ecp_|__ecp|EC_|ECDSA|ec_|sha\d|SHA\d|HMAC|RAND|x25519|fe_|fe51|ge_|cmov|X509|ASN1|asn1|PACKET|WPACKET|OBJ_|chacha|ChaCha|poly1305|Poly1305|evp_|ctr|rand_|tls1|ssl3|lh_|OPENSSL_sk|sk_|md_|kdf|hkdf)/;

/** The group of a native function, by its symbol. The compiler is apart: it fades with warm-up. */
function symbolGroup(fn) {
  if (/^nghttp2_/.test(fn)) return 'nghttp2 (framing, HPACK)';
  if (/node::http2::/.test(fn)) return 'node http2 (C++)';
  if (/^llhttp_|node::.*Parser/.test(fn)) return 'llhttp (HTTP/1.1 parsing)';
  if (TLS_SYMBOL.test(fn)) return 'TLS (OpenSSL, node TLSWrap)';
  if (
    /v8::internal::(compiler|maglev|baseline|Zone|OptimizedCompilationJob|Compiler|Assembler|TurboAssembler|MacroAssembler|CodeGenerator|RegisterAllocat)/.test(
      fn,
    )
  )
    return COMPILER;
  if (
    /v8::internal::(Heap|Scaveng|MarkCompact|Mark|Sweep|Evacuat|Concurrent|Minor|GC|Remembered|SlotSet|MemoryChunk|Page|Spaces|PagedSpace|NewSpace|SemiSpace|LocalHeap|IncrementalMarking|WeakObjects)|heap::base/.test(
      fn,
    )
  )
    return 'V8 garbage collector';
  if (/^Builtins_/.test(fn)) return 'V8 builtins (interpreter, ICs, library)';
  if (/v8::|^v8_|_ZN2v8/.test(fn)) return 'V8 runtime (objects, ICs, API)';
  if (/^uv_|^uv__/.test(fn)) return 'libuv';
  if (/node::/.test(fn)) return 'node (other C++)';
  return 'libc, libstdc++, other';
}

/** V8's optimising compilers, on the main thread and their own: apart from the per-request cost. */
export const COMPILER = 'V8 compiler (apart)';

/**
 * Exclusive instructions per function in one dump (callgrind_annotate), JIT addresses named
 * through the perf map: Map name → { ir, group }.
 */
export async function functionsOf(file, pid) {
  const { stdout } = await run('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], {
    maxBuffer: 256 * 1024 * 1024,
  });
  const map = perfMap(pid);
  const fns = new Map();
  for (const line of stdout.split('\n')) {
    const m = /^\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?(\S.*)$/.exec(line);
    if (!m) continue;
    const ir = Number(m[1].replace(/,/g, ''));
    const where = m[2].replace(/\s+\[[^\]]*\]\s*$/, '');
    if (/PROGRAM TOTALS/.test(where)) continue;
    let fn = where.slice(where.indexOf(':') + 1);
    let group;
    const address = /^0x([0-9a-f]+)$/i.exec(fn);
    if (address) {
      const entry = lookup(map, parseInt(address[1], 16));
      // One name per JS function, whichever tier (the perf map marks tiers with * and ~).
      fn = entry ? entry.name.replace(/^JS:[*~^+]?/, 'JS:') : 'JIT code (unmapped)';
      group = entry ? scriptGroup(entry.name) : 'JS: unmapped JIT code';
    } else group = symbolGroup(fn);
    const had = fns.get(fn);
    fns.set(fn, { ir: (had?.ir ?? 0) + ir, group });
  }
  return fns;
}

/** Instructions by group in one dump: Map group → Ir. */
export async function groupsOf(file, pid) {
  const groups = new Map();
  for (const { ir, group } of (await functionsOf(file, pid)).values()) {
    groups.set(group, (groups.get(group) ?? 0) + ir);
  }
  return groups;
}
