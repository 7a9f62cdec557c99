/**
 * Requests Node's HTTP server refuses before Koa sees them (oversized headers, garbage bytes, too slow) are
 * still answered in the platform envelope, then the connection is closed with a lingering close
 * (lingering-close.ts), so that a client still sending can read the answer.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { platformErrorJson } from './error-renderer.js';
import { lingerThenClose } from './lingering-close.js';

/**
 * What Node's refusals are answered with; anything else the parser refuses is a malformed request.
 * A request whose headers or body do not arrive within the server's `headersTimeout` or
 * `requestTimeout` (server.ts) is Node's ERR_HTTP_REQUEST_TIMEOUT: 408, as Node itself answers it.
 */
const PARSER_ERRORS: Record<string, ErrorSpec> = {
  HPE_HEADER_OVERFLOW: ERRORS.headersTooLarge,
  ERR_HTTP_REQUEST_TIMEOUT: ERRORS.requestTimeout,
};

export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const spec: ErrorSpec = PARSER_ERRORS[err.code ?? ''] ?? ERRORS.malformedRequest;
  const body = platformErrorJson(spec);
  lingerThenClose(socket);
  socket.end(
    `HTTP/1.1 ${spec.status} ${STATUS_CODES[spec.status]}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
