/**
 * Requests Node's HTTP parser refuses before Koa sees them (oversized headers, garbage bytes) are
 * still answered in the platform envelope, then the connection is closed — after a lingering
 * close, so the client can read the answer.
 */
import type { Socket } from 'node:net';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { platformErrorJson } from './error-renderer.js';
import { DRAIN_LIMIT } from './json-body.js';

/**
 * How long a refused connection keeps reading and dropping what the client still sends. Closing a
 * socket with unread bytes makes the kernel send a reset, and a client still writing its body
 * (a 1 MB upload behind a 30 KB header, say) then meets EPIPE and drops the answer already in its
 * receive buffer: 1–6% of such requests saw no answer at all before this. A client that stops
 * sending and closes ends the linger at once; nginx's `lingering_timeout` is 5 s, Apache's 2 s.
 */
const LINGER_MS = 2_000;

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

/**
 * Takes the socket from the HTTP parser (which would meet its error again on the next bytes and
 * close at once) and drops what arrives until the client closes, DRAIN_LIMIT bytes have come, or
 * LINGER_MS has passed.
 */
function lingerThenClose(socket: Socket): void {
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  let drained = 0;
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT) close();
  });
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.resume();
}
