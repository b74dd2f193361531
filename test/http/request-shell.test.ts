// requestShell: a request its handler answers at once needs no promise; whatever the handler
// throws, at once or later, is logged and answered 500 with the request's id.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import type { ListenerContext, RequestContext } from '../../src/http/context.js';
import { requestShell } from '../../src/http/request-context.js';
import type { GatewayState } from '../../src/http/state.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { capturingLogger } from '../helpers/log-capture.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(handle: (c: RequestContext) => Promise<void> | void) {
  const { logger, lines } = capturingLogger('error');
  const listener: ListenerContext = {
    state: () => ({}) as GatewayState,
    store: new MemoryStore({ maxKeys: 10, sweepIntervalMs: 60_000 }),
    logger,
    metrics: new GatewayMetrics({ processMetrics: false }),
    ietfHeaders: false,
  };
  server = createServer(requestShell(listener, 'proxy', handle));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const ask = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-request-id': 'req-1' } });
    return { status: res.status, id: res.headers.get('x-request-id'), body: await res.text() };
  };
  return { ask, lines };
}

const failed = {
  status: 500,
  id: 'req-1',
  body: '{"error":{"code":"internal_error","message":"The gateway failed to handle this request."}}',
};

test('a handler that answers at once returns nothing, and its answer stands', async () => {
  const { ask, lines } = await serve((c) => {
    c.res.writeHead(204, c.headers).end();
  });
  expect(await ask()).toEqual({ status: 204, id: 'req-1', body: '' });
  expect(lines).toEqual([]);
});

test('a handler that throws at once: logged, answered 500', async () => {
  const { ask, lines } = await serve(() => {
    throw new Error('at once');
  });
  expect(await ask()).toEqual(failed);
  expect(lines).toMatchObject([{ msg: 'request failed', reqId: 'req-1', err: { message: 'at once' } }]);
});

test('a handler whose promise rejects: logged, answered 500', async () => {
  const { ask, lines } = await serve(async () => {
    await Promise.resolve();
    throw new Error('later');
  });
  expect(await ask()).toEqual(failed);
  expect(lines).toMatchObject([{ msg: 'request failed', reqId: 'req-1', err: { message: 'later' } }]);
});
