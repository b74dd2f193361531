import { configDefaults, defineConfig } from 'vitest/config';

/**
 * test/ mirrors src/. Two projects: `unit` holds pure tests (`*.unit.test.ts`: no processes, no
 * sockets) and runs in seconds (`npm run test:unit`); `integration` (every other `*.test.ts`)
 * starts real servers, Redis and tollgate processes, which run the compiled CLI that its global
 * setup builds once. `npm test` runs both. The client workspace's tests (client/test/) join them:
 * its pure tests in `unit`, those against a real gateway in `integration`.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        // Pure tests keep no global state, so they share threads and one module graph: seconds, not a minute.
        test: {
          name: 'unit',
          include: ['test/**/*.unit.test.ts', 'client/test/unit/**/*.test.ts'],
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', 'client/test/*.test.ts'],
          exclude: [...configDefaults.exclude, '**/*.unit.test.ts'],
          globalSetup: ['test/setup/build-once.ts'],
        },
      },
    ],
  },
});
