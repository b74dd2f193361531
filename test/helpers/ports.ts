import { once } from 'node:events';
import { connect, createServer } from 'node:net';

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Opens (and at once closes) a fresh TCP connection; rejects with the socket error, e.g. ECONNREFUSED. */
export async function connectOnce(port: number, host = '127.0.0.1'): Promise<void> {
  const socket = connect(port, host);
  try {
    await once(socket, 'connect');
  } finally {
    socket.destroy();
  }
}
