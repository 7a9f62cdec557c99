/** A real HTTP server on 127.0.0.1 that answers what a test scripts, and records what it was sent. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown;
  /** Milliseconds to wait before answering (to provoke client timeouts). */
  delayMs?: number;
}

export type StubHandler = (req: StubRequest, count: number) => StubReply | Promise<StubReply>;

export interface Stub {
  baseUrl: string;
  requests: StubRequest[];
  close(): Promise<void>;
}

/** `routes` maps `METHOD /path` to a handler; `count` is how often that route was called before (0 first). */
export async function startStub(routes: Record<string, StubHandler>): Promise<Stub> {
  const requests: StubRequest[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const entry: StubRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      requests.push(entry);
      const key = `${entry.method} ${entry.path}`;
      const handler = routes[key];
      const count = counts.get(key) ?? 0;
      counts.set(key, count + 1);
      const reply: StubReply = handler ? await handler(entry, count) : { status: 404, body: { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not found', details: {} } } };
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'Content-Type': typeof reply.body === 'string' ? 'text/plain' : 'application/json', ...reply.headers });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const platformError = (status: number, name: string, message: string, details: Record<string, unknown> = {}, code?: string) => ({
  data: null,
  error: { status, name, message, details, ...(code ? { code } : {}) },
});
