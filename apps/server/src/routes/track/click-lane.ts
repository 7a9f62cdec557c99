/**
 * POST /api/v1/track/click (4.1), its fast lane: the route's everyday request, a real click on an
 * active link, answered from node:http without Koa's per-request context, middleware frames and
 * finish listeners, which cost a third of the click's CPU time (docs/performance.md).
 *
 * The lane answers only the 200 of a real click. Every other request is handed to Koa untouched
 * (another route, a query string, a key, a body without a declared length or over the limit), or
 * handed over with what the lane already did (http/lane-handoff.ts): a refused or failed rate-limit
 * point, a body that is not a JSON object, a test click, any error. So each refusal still comes
 * from the one error renderer, in the same envelope, and a request spends one point either way.
 * The click itself is resolved and recorded by the same functions as Koa's handler (click.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HEADERS, LIMITS, ROUTES, type ClickResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { testModeOf } from '../../domain/json-values.js';
import { bodyIncomplete, parseJsonBody } from '../../http/json-body.js';
import { answerRate, rateKey, spendRate, type RateOutcome } from '../../http/rate-limit.js';
import { handOff, type Handoff } from '../../http/lane-handoff.js';
import { clientIp } from '../../http/client-ip.js';
import { requestIdFor } from '../../http/request-id.js';
import { OPEN_CORS_HEADERS } from '../../http/cors.js';
import { logRequestLine } from '../../http/access-log.js';
import { recordClick, resolveLink } from '../../domain/click.js';

const PATH = ROUTES.trackClick.path;

/** The request listener of the server: the click lane in front of Koa's. */
export function withClickLane(deps: AppDeps, koa: RequestListener): RequestListener {
  const observeAnswer = deps.ops.metrics.requestObserver('POST', PATH, 200);
  const toKoa = (req: IncomingMessage, res: ServerResponse, handoff: Handoff): void => {
    handOff(req, handoff);
    koa(req, res);
  };

  async function lane(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    let rate: RateOutcome | undefined;
    let raw: Buffer | undefined;
    let answer: ClickResponse;
    try {
      const ip = clientIp(req, deps.config.trustProxy);
      // Part 8: the point is spent before the body is read, as Koa's route entry does.
      rate = await spendRate(deps.limiters, 'click', rateKey('click', undefined, ip));
      if (!('allowed' in rate)) return toKoa(req, res, { rate });
      const body = readBody(req);
      raw = body instanceof Promise ? await body : body;
      const parsed = parseJsonBody(raw);
      if ('error' in parsed) return toKoa(req, res, { rate, raw });
      const link = await resolveLink(deps, parsed.body.affiliate_url);
      if (testModeOf(parsed.body).testMode) return toKoa(req, res, { rate, raw });
      answer = await recordClick(deps, { ip, headers: req.headers }, parsed.body, link);
    } catch (error) {
      return toKoa(req, res, { rate, raw, failure: { error } });
    }
    const requestId = requestIdFor(req.headers);
    answerClick(res, requestId, rate, JSON.stringify(answer));
    if (deps.logger.isLevelEnabled('info')) logRequestLine(deps.logger, { requestId, method: 'POST', path: PATH, status: 200 }, started);
    observeAnswer((performance.now() - started) / 1000);
  }

  return function handleRequest(req, res) {
    // Koa matches the path without the query string and with an optional trailing slash; the
    // lane takes only the exact path, the rest goes to Koa, which answers it the same way.
    const declared = Number(req.headers['content-length']);
    if (req.method !== 'POST' || req.url !== PATH || req.headers.authorization !== undefined || !(declared <= LIMITS.maxJsonBodyBytes)) {
      koa(req, res);
      return;
    }
    void lane(req, res);
  };
}

/**
 * The body, whole; its length was declared and within the limit, and the HTTP parser holds it to
 * that. The parser hands the headers to JavaScript, and the microtasks run, before it parses the
 * body of the same packet, so the lane finds the body still unparsed when its rate-limit point is
 * spent. It waits one turn of the event loop instead (setImmediate runs after the I/O callbacks
 * that parse the packet) and takes the body from the stream's buffer at once: a stream read with
 * 'data' and 'end' listeners costs several ticks per request (resume, flow, end, destroy), a few
 * per cent of a click. A body that is still not there after the turn (a slow client, a packet
 * split in two) is read from the stream.
 */
function readBody(req: IncomingMessage): Buffer | Promise<Buffer> {
  if (req.complete) return takeBuffered(req);
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      if (req.complete) resolve(takeBuffered(req));
      else streamBody(req).then(resolve, reject);
    });
  });
}

function takeBuffered(req: IncomingMessage): Buffer {
  return (req.read() as Buffer | null) ?? Buffer.alloc(0);
}

function streamBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (req.destroyed) return reject(bodyIncomplete());
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', () => reject(bodyIncomplete()));
    // A client that goes away mid-body ends the wait; the request is then handed to Koa with the error.
    req.on('close', () => reject(bodyIncomplete()));
  });
}

/**
 * The 200 of a click, with the headers Koa's route gives it, in the same order (7.2, part 8, CORS).
 * They go to writeHead as one list, which skips the per-header bookkeeping of setHeader.
 */
function answerClick(res: ServerResponse, requestId: string, rate: RateOutcome, json: string): void {
  const headers: string[] = [HEADERS.requestId, requestId];
  for (const [name, value] of OPEN_CORS_HEADERS) headers.push(name, value);
  answerRate('click', rate, (name, value) => headers.push(name, value));
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(json)));
  res.writeHead(200, headers);
  res.end(json);
}
