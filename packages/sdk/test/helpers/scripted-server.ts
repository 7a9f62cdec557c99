/** A real `node:http` server that answers from a script and records what it received. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { STATUS_NAMES, formatMessage, type ErrorSpec } from '@reftrack/contract';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when none was sent. */
  body: unknown;
  at: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Sent as is instead of JSON. */
  raw?: string;
  headers?: Record<string, string>;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
}

export interface ScriptedServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Answers the n-th request with `replies[n]`, repeating the last reply once the script runs out. */
export async function startScriptedServer(replies: Reply[] | ((request: Received, index: number) => Reply)): Promise<ScriptedServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const request: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined, at: Date.now() };
      const index = received.push(request) - 1;
      const reply = typeof replies === 'function' ? replies(request, index) : replies[Math.min(index, replies.length - 1)];
      if (reply.hang) return;
      const payload = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      res.writeHead(reply.status, {
        'content-type': reply.raw === undefined ? 'application/json' : 'text/plain',
        'x-request-id': `req_${index + 1}`,
        ...reply.headers,
      });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A catalogue error in the platform envelope of spec 7.1, as the server sends it. */
export function platformError(spec: ErrorSpec, params: Record<string, string | number> = {}, details: Record<string, unknown> = {}) {
  return {
    data: null,
    error: { status: spec.status, name: STATUS_NAMES[spec.status], message: formatMessage(spec.message, params), details, ...(spec.code ? { code: spec.code } : {}) },
  };
}

/** A catalogue error in the typed envelope of spec 7.1. */
export function typedError(spec: ErrorSpec, params: Record<string, string | number> = {}, extras: Record<string, unknown> = {}) {
  return { error: { code: spec.code, message: formatMessage(spec.message, params), ...extras } };
}
