import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, LIMITS } from '@reftrack/contract';
import { answerClientError } from '../src/http/client-error.js';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

describe(`[${dbKind}] 7.1 envelopes and request ids`, () => {
  it('malformed JSON answers 400 in the platform envelope', async () => {
    const res = await s.post('/api/v1/track/click', '{"affiliate_url": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ data: null, error: { status: 400, name: 'BadRequestError', message: 'Malformed JSON body', details: {} } });
  });

  it('a JSON array body answers 400', async () => {
    const res = await s.post('/api/v1/track/click', '[1,2]');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Request body must be a JSON object');
  });

  it('an oversized body answers 413 in the platform envelope', async () => {
    const res = await s.post('/api/v1/track/click', JSON.stringify({ affiliate_url: 'x'.repeat(LIMITS.maxJsonBodyBytes + 10) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ data: null, error: { status: 413, name: 'PayloadTooLargeError', message: expect.stringContaining('too large'), details: {} } });
  });

  it('an oversized sale body carries invalid_request', async () => {
    const res = await s.post('/api/v1/track/sale', JSON.stringify({ transaction_id: 'x'.repeat(LIMITS.maxJsonBodyBytes + 10) }), bearer(KEY1));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('invalid_request');
  });

  /**
   * Sends a request head over a half-open socket, waits for the whole answer and the server's FIN,
   * then writes `after` more bytes — a client still uploading the body the server refused — and
   * reports what the socket met: a reset shows as an error.
   */
  function refusedThenKeepSending(head: string | Buffer, after: number): Promise<{ answer: string; error?: string }> {
    const { port } = new URL(s.url);
    return new Promise((resolve) => {
      const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
      const chunks: Buffer[] = [];
      let error: string | undefined;
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      socket.on('end', async () => {
        // The server has answered and half-closed: the upload goes on in pieces (a write after a
        // reset is what meets it), then the client closes.
        for (let sent = 0; sent < after && !socket.destroyed; sent += 16 * 1024) {
          await new Promise((r) => socket.write(Buffer.alloc(16 * 1024, 0x61), r));
          await new Promise((r) => setTimeout(r, 5));
        }
        socket.end();
      });
      socket.on('close', () => resolve({ answer: Buffer.concat(chunks).toString('latin1'), ...(error ? { error } : {}) }));
      socket.write(head);
    });
  }

  it('oversized request headers answer 431 in the platform envelope, and the connection closes without a reset while the body still comes', async () => {
    const head = `POST /api/v1/track/lead HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Oversized: ${'h'.repeat(20_000)}\r\nContent-Length: 1000000\r\n\r\n`;
    const { answer, error } = await refusedThenKeepSending(head, 256 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual({ data: null, error: { status: 431, name: expect.any(String), message: 'Request headers too large', details: {} } });
    expect(error).toBeUndefined();
  });

  it('bytes that are not HTTP answer 400 in the platform envelope, and the connection closes without a reset', async () => {
    const { answer, error } = await refusedThenKeepSending('NOT HTTP AT ALL\r\n\r\n', 64 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]).error.status).toBe(400);
    expect(error).toBeUndefined();
  });

  it('a declared body over 8 MiB answers 413 at once, and the connection closes without a reset while the body still comes', async () => {
    const head = `POST /api/v1/track/click HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n{"affiliate_url":"`;
    const { answer, error } = await refusedThenKeepSending(head, 1024 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual({ data: null, error: { status: 413, name: 'PayloadTooLargeError', message: expect.stringContaining('too large'), details: {} } });
    expect(error).toBeUndefined();
  });

  it('a chunked body that passes 8 MiB answers 413, and the connection closes without a reset while the body still comes', async () => {
    const chunk = Buffer.alloc(9 * 1024 * 1024, 0x61);
    const head = Buffer.concat([
      Buffer.from(`POST /api/v1/track/click HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from('\r\n'),
    ]);
    const { answer, error } = await refusedThenKeepSending(head, 1024 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(error).toBeUndefined();
  });

  it('X-Request-ID is on tracking and readiness responses, success and error alike', async () => {
    for (const res of [
      await s.post('/api/v1/track/click', {}),
      await s.post('/api/v1/track/sale', {}),
      await s.post('/api/v1/track/refund', {}, bearer(KEY1)),
      await s.post('/api/v1/track/lead', {}),
      await s.get('/api/v1/programs/me/readiness', bearer(KEY1)),
    ]) {
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('never answers a stack trace', async () => {
    const res = await s.post('/api/v1/track/sale', { transaction_id: { $gt: '' }, amount_cents: 'DROP TABLE' }, bearer(KEY1));
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/at \w+ \(|node_modules|\.ts:/);
  });

  it('an unknown route answers 404 in the platform envelope', async () => {
    const res = await s.get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ data: null, error: { status: 404, name: 'NotFoundError', message: 'Not found', details: {} } });
  });

  it('a wrong method on a tracking route answers 405 in the platform envelope, with Allow', async () => {
    const res = await s.get('/api/v1/track/click');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('POST');
    expect(res.body).toEqual({ data: null, error: { status: 405, name: 'MethodNotAllowedError', message: 'Method not allowed', details: {} } });
  });

  it('GET /healthz answers 200 when the database answers', async () => {
    const res = await s.get('/healthz');
    expect(res.status).toBe(200);
  });
});

describe(`[${dbKind}] 7 error reference page`, () => {
  it('serves one anchor per error code', async () => {
    const res = await s.get('/docs/errors');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    for (const code of ['invalid_request', 'no_attribution', 'unauthorized', 'not_found', 'duplicate_transaction', 'unsupported_currency', 'internal_error', 'invalid_key', 'rate_limited', 'api_key_rotation_required', 'link_disabled', 'ACCOUNT_BLOCKED']) {
      expect(res.text).toContain(`id="${code}"`);
    }
  });
});

describe(`[${dbKind}] lingering close and shutdown`, () => {
  it('a shutting-down server closes a connection that lingers after its answer instead of waiting for the client', async () => {
    const own = await startTestServer();
    const { port } = new URL(own.url);
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    const answered = new Promise<void>((resolve) => socket.once('end', resolve));
    socket.on('error', () => undefined);
    // A 431 with the client still connected and silent: the server lingers up to 5 s for more.
    socket.write(`POST /api/v1/track/lead HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Oversized: ${'h'.repeat(20_000)}\r\nContent-Length: 1000\r\n\r\n`);
    socket.resume();
    await answered;
    // close() resolves only once every connection is closed, the lingering one among them.
    const stopped = own.close().then(() => 'stopped');
    const lingerLeft = new Promise<string>((resolve) => setTimeout(() => resolve('still lingering'), 4_000));
    expect(await Promise.race([stopped, lingerLeft])).toBe('stopped');
    socket.destroy();
  });
});

describe(`[${dbKind}] requests too slow to arrive`, () => {
  /**
   * The server's own timeouts are 15 s for headers and 30 s for a request: a Node server with the
   * same handler and short ones, whose route reads the whole body before it answers, as ours do.
   * Sends `head`, then nothing, and returns all the connection received.
   */
  async function sendAndStall(head: string): Promise<string> {
    const server = http.createServer({ connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 600 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('{"data":"late"}'));
      req.on('error', () => res.end('{"data":"after an error"}'));
    });
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      return await new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (d: Buffer) => chunks.push(d));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.write(head);
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const timeoutEnvelope = { data: null, error: { status: 408, name: 'RequestTimeoutError', message: ERRORS.requestTimeout.message, details: {} } };

  it('headers that do not arrive within the headers timeout answer 408 in the platform envelope', async () => {
    const answer = await sendAndStall('POST /api/v1/track/click HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual(timeoutEnvelope);
  });

  it('a body that does not arrive within the request timeout answers 408 in the platform envelope, and nothing after it', async () => {
    const answer = await sendAndStall('POST /api/v1/track/click HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"affiliate');
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer.split('HTTP/1.1').length).toBe(2);
    expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual(timeoutEnvelope);
  });
});
