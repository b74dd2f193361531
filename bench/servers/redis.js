// Runs redis-server (no persistence, loopback only) for the bench, and stops it when told to
// (SIGTERM) or when the bench process goes away, so it never outlives the bench.
import { spawn } from 'node:child_process';

const redis = spawn(
  'redis-server',
  [
    '--port',
    process.env.PORT,
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'no',
    '--loglevel',
    'warning',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);
redis.once('error', (err) => {
  console.error(`cannot run redis-server: ${err.message}`);
  process.exit(1);
});
redis.once('exit', (code, signal) => process.exit(signal ? 0 : (code ?? 1)));
process.once('SIGTERM', () => redis.kill('SIGTERM'));
