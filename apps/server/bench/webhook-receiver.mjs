#!/usr/bin/env node
/**
 * The webhooks benchmark's receiver (bench/webhooks.mjs), a process of its own: in the load
 * generator's process its answers and its clock readings waited behind autocannon's work, which
 * counted the generator's own delays as delivery lag. Answers 204 to every delivery and notes
 * receipt minus the event's `timestamp`; `GET /lags` answers the lags noted so far. Prints its
 * port on stdout.
 */
import http from 'node:http';

const lags = [];
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/lags') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(lags));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    lags.push(Date.now() - Date.parse(event.timestamp));
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
