/**
 * Requests Node's HTTP server refuses before Koa sees them (oversized headers, garbage bytes, too slow) are
 * still answered in the platform envelope, then the connection is closed with a lingering close
 * (lingering-close.ts), so that a client still sending can read the answer.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { platformErrorJson } from './error-renderer.js';
import { lingerThenClose } from './lingering-close.js';

/**
 * What Node's refusals are answered with; anything else the parser refuses is a malformed request.
 * A request whose headers or body do not arrive within the server's `headersTimeout` or
 * `requestTimeout` (server.ts) is Node's ERR_HTTP_REQUEST_TIMEOUT: 408, as Node itself answers it
 * (and when no answer to it has begun).
 */
const PARSER_ERRORS: Record<string, ErrorSpec> = {
  HPE_HEADER_OVERFLOW: ERRORS.headersTooLarge,
  ERR_HTTP_REQUEST_TIMEOUT: ERRORS.requestTimeout,
};

export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  const spec: ErrorSpec = PARSER_ERRORS[err.code ?? ''] ?? ERRORS.malformedRequest;
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight && spec === ERRORS.requestTimeout && !inFlight.headersSent && !inFlight.req.complete && socket.writable) {
    // This request's body was still coming when the request timeout struck, and its handler is
    // waiting for it. As Node does, the 408 goes out and the socket is destroyed at once, so the
    // handler's own answer, when its body read fails, has nowhere to go.
    socket.write(rawAnswer(spec));
    socket.destroy();
    return;
  }
  // Any other failure beside an answer in progress would put a second answer on the connection.
  if (!socket.writable || inFlight) {
    socket.destroy();
    return;
  }
  lingerThenClose(socket);
  socket.end(rawAnswer(spec));
}

function rawAnswer(spec: ErrorSpec): string {
  const body = platformErrorJson(spec);
  return (
    `HTTP/1.1 ${spec.status} ${STATUS_CODES[spec.status]}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
