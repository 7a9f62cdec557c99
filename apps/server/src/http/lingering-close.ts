/**
 * Lingering close: a connection closed while the client is still sending (an upload the server
 * refused, a request the parser refused) is first read to its end and dropped, as nginx and Apache
 * do. Closing a socket with unread bytes makes the kernel reset the connection, and a client still
 * writing its body then meets EPIPE and drops the answer already in its receive buffer: before this,
 * most answers to a 20 MB upload and 1–6% of 431s with a body behind them were lost so.
 */
import type { IncomingMessage } from 'node:http';
import type { Server, Socket } from 'node:net';
import type { Context } from 'koa';

/** The longest a closing connection waits for the client's next bytes (nginx's `lingering_timeout`). */
const LINGER_IDLE_MS = 5_000;
/** The longest it lingers in all, however the bytes trickle in (nginx's `lingering_time`). */
const LINGER_TOTAL_MS = 30_000;

/** The sockets lingering now, so that a server shutting down need not wait for them. */
const open = new Set<Socket>();

/** Closes the sockets of `server` that are lingering: it is shutting down and they have their answers. */
export function stopLingering(server: Server): void {
  for (const socket of open) if ((socket as Socket & { server?: Server }).server === server) socket.destroy();
}

/**
 * Takes the socket from the HTTP parser (which would meet an error on the next bytes and close at
 * once) and drops what arrives until the client closes, or LINGER_IDLE_MS passes with nothing, or
 * LINGER_TOTAL_MS in all. The caller ends the socket's writing side (after its answer).
 */
export function lingerThenClose(socket: Socket): void {
  open.add(socket);
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  const close = () => socket.destroy();
  const idle = setTimeout(close, LINGER_IDLE_MS);
  const total = setTimeout(close, LINGER_TOTAL_MS);
  idle.unref();
  total.unref();
  socket.on('data', () => idle.refresh());
  socket.once('end', close);
  socket.once('close', () => {
    open.delete(socket);
    clearTimeout(idle);
    clearTimeout(total);
  });
  socket.resume();
}

const lingering = new WeakSet<IncomingMessage>();

/** Whether this request's connection closes after its answer with a lingering close. */
export function closesLingering(ctx: Context): boolean {
  return lingering.has(ctx.req);
}

/**
 * Closes the connection after this answer, lingering: the answer says `Connection: close`, and the
 * socket, once Node has written it, drains what the client still sends instead of resetting.
 */
export function closeAfterAnswer(ctx: Context): void {
  lingering.add(ctx.req);
  ctx.set('Connection', 'close');
  const socket = ctx.req.socket;
  // Node's HTTP server ends a `Connection: close` answer's socket with destroySoon() once the answer
  // is written: that one socket's call lingers instead.
  socket.destroySoon = () => {
    lingerThenClose(socket);
    socket.end();
  };
}
