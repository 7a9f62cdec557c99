/**
 * Requests Node's HTTP parser refuses before Koa sees them (oversized headers, garbage bytes) are
 * still answered in the platform envelope, then the connection is closed with a lingering close
 * (lingering-close.ts), so that a client still sending can read the answer.
 */
import type { Socket } from 'node:net';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { platformErrorJson } from './error-renderer.js';
import { lingerThenClose } from './lingering-close.js';

export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const spec: ErrorSpec = err.code === 'HPE_HEADER_OVERFLOW' ? ERRORS.headersTooLarge : ERRORS.malformedRequest;
  const body = platformErrorJson(spec);
  lingerThenClose(socket);
  socket.end(
    `HTTP/1.1 ${spec.status} ${spec.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
