// How a server process (its main process; cluster workers apart) cut its work into system calls
// and event-loop sleeps over a measured window, from /proc: read and write calls of the whole
// process (/proc/<pid>/io syscr, syscw) and how often its main thread blocked (/proc/<pid>/status
// voluntary_ctxt_switches: an epoll wait with nothing ready). Per request, they say how many
// requests each read carried: a server whose load generator is slower in one round reads fewer
// requests per call, and would pay more CPU per request for it.
import { readFileSync } from 'node:fs';

const field = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);

/** The counters now, or undefined when /proc cannot be read (not Linux, or the process is gone). */
export function sampleLoop(pid) {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      reads: field(io, 'syscr'),
      writes: field(io, 'syscw'),
      sleeps: field(status, 'voluntary_ctxt_switches'),
    };
  } catch {
    return undefined;
  }
}

/** Per request between two samples: { readsPerReq, writesPerReq, sleepsPerReq }. */
export function loopBetween(before, after, responses) {
  if (!before || !after || responses === 0) return undefined;
  return {
    readsPerReq: (after.reads - before.reads) / responses,
    writesPerReq: (after.writes - before.writes) / responses,
    sleepsPerReq: (after.sleeps - before.sleeps) / responses,
  };
}
