import { execFileSync } from 'node:child_process';

/**
 * Builds dist/ once before the integration tests, so that every process they start runs
 * `node dist/cli.js` (no TypeScript compiled at each start) from the sources under test.
 */
export default function buildOnce(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
