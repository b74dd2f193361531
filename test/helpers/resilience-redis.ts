import type { RedisServer } from './redis-server.js';

/** The pid of a running redis-server, as it reports it (RedisServer keeps its child process to itself). */
export async function redisPid(redis: RedisServer): Promise<number> {
  const client = redis.client();
  try {
    const info = await client.info('server');
    const match = /^process_id:(\d+)\s*$/m.exec(info);
    if (!match) throw new Error('INFO server reported no process_id');
    return Number(match[1]);
  } finally {
    client.disconnect();
  }
}

/** A redis-server frozen with SIGSTOP: it keeps every connection open and answers nothing until thawed. */
export interface FrozenRedis {
  /** Sends SIGCONT. Safe to call more than once. */
  thaw(): void;
}

export async function freezeRedis(redis: RedisServer): Promise<FrozenRedis> {
  const pid = await redisPid(redis);
  process.kill(pid, 'SIGSTOP');
  let frozen = true;
  return {
    thaw() {
      if (!frozen) return;
      frozen = false;
      process.kill(pid, 'SIGCONT');
    },
  };
}
