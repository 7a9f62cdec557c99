/**
 * The baseline: a bare `node:http` server that does the least any click endpoint must do — read the
 * whole request body and answer the click route's JSON. The server's click throughput is reported
 * as a ratio of this figure, measured with the same load generator and settings, so that the ratio
 * says what the framework, the rate limiter and the database cost, independent of the machine.
 *
 * Run as its own child process (never inside the benchmark process, which may be the load
 * generator): `PORT=<port> HOST=127.0.0.1 node bench/bare-server.mjs`. Prints `listening <port>`.
 */
import http from 'node:http';

const BODY = JSON.stringify({ success: true, click_id: 'clk_x', partner_code: 'p', cookie_window_days: 60 });
const LENGTH = String(Buffer.byteLength(BODY));

const server = http.createServer((req, res) => {
  // Read the body to the end, as the real route must before it can parse it.
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': LENGTH });
    res.end(BODY);
  });
});
// Same keep-alive as the real server, so connections are reused the same way.
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
