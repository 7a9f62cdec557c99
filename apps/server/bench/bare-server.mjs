/**
 * The baseline: a bare `node:http` server that does the least any click endpoint must do — read the
 * whole request body and answer the click route's JSON. The server's click throughput is reported
 * as a ratio of this figure, measured with the same load generator and settings, so that the ratio
 * says what the framework, the rate limiter and the database cost, independent of the machine.
 *
 * Run as its own child process (never inside the benchmark process, which may be the load
 * generator): `PORT=<port> HOST=127.0.0.1 node bench/bare-server.mjs`. Prints `listening <port>`.
 *
 * `BARE_ANSWER` (JSON, used by answer-cost.mjs) replaces the answer with another one, to measure
 * what the parts of the real click answer cost a server that does nothing else:
 * `{ "headers": [[name, value], ...], "body": "...", "requestIdHeader"?: name, "parse"?: true }`
 * gives those headers in that order (the request id header with a new UUID per answer) and that
 * body, after parsing the request's body as JSON when `parse` is set.
 */
import crypto from 'node:crypto';
import http from 'node:http';

const BODY = JSON.stringify({ success: true, click_id: 'clk_x', partner_code: 'p', cookie_window_days: 60 });
const LENGTH = String(Buffer.byteLength(BODY));

/** @type {{ headers: Array<[string, string]>, body: string, requestIdHeader?: string, parse?: boolean } | undefined} */
const ANSWER = process.env.BARE_ANSWER ? JSON.parse(process.env.BARE_ANSWER) : undefined;

/** @param {Buffer} raw @param {http.ServerResponse} res */
function answerAs(raw, res) {
  if (!ANSWER) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': LENGTH });
    res.end(BODY);
    return;
  }
  if (ANSWER.parse) {
    try {
      JSON.parse(raw.toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-length': '0' });
      res.end();
      return;
    }
  }
  // A flat list, as the click lane gives writeHead its headers.
  const headers = [];
  for (const [name, value] of ANSWER.headers) headers.push(name, name === ANSWER.requestIdHeader ? crypto.randomUUID() : value);
  res.writeHead(200, headers);
  res.end(ANSWER.body);
}

const server = http.createServer((req, res) => {
  // Read the body to the end, as the real route must before it can parse it.
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => answerAs(Buffer.concat(chunks), res));
});
// Same keep-alive as the real server, so connections are reused the same way.
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
