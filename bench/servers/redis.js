// Runs redis-server (no persistence, loopback only) for the bench, and stops it when told to
// (SIGTERM) or when the bench process goes away, so it never outlives the bench.
import { spawn } from 'node:child_process';
import { redisServerArgs } from '../lib/processes.js';

const redis = spawn('redis-server', redisServerArgs(process.env.PORT), {
  stdio: ['ignore', 'inherit', 'inherit'],
});
redis.once('error', (err) => {
  console.error(`cannot run redis-server: ${err.message}`);
  process.exit(1);
});
redis.once('exit', (code, signal) => process.exit(signal ? 0 : (code ?? 1)));
process.once('SIGTERM', () => redis.kill('SIGTERM'));
