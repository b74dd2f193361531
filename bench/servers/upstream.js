// The upstream every scenario forwards to: answers any request 200 with a small JSON body,
// after reading the request body.
import { createServer } from 'node:http';

const BODY = '{"ok":true,"service":"bench-upstream"}';
const port = Number(process.env.PORT);

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    const headers = { 'content-type': 'application/json', 'content-length': BODY.length };
    // The post-charge scenario's route charges what the upstream reports.
    if (req.url === '/bench/post-charge') headers['x-cost'] = '1';
    res.writeHead(200, headers);
    res.end(BODY);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
