/**
 * A real HTTP receiver of webhook deliveries on 127.0.0.1: it keeps every request's raw body and
 * headers, and answers with the status the test sets (by default 204). Verifying is the tests'
 * job, with the real `standardwebhooks` and `svix` libraries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  body: string;
  headers: Record<string, string>;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** The status of the next answers; a function decides per request. */
  answer: number | ((req: ReceivedDelivery, index: number) => number);
  /** Text of the answers' body. */
  answerBody: string;
  /** While true, requests are recorded and never answered (a receiver that hangs). */
  hold: boolean;
  /** Requests being answered right now, at most (a check that attempts never overlap). */
  maxConcurrent: number;
  /** Delay before each answer, in ms. */
  delayMs: number;
  /** Drops the connections of held requests. */
  dropHeld(): void;
  /** Waits until at least `n` deliveries arrived (or fails after `ms`). */
  waitFor(n: number, ms?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: 204,
    answerBody: '',
    hold: false,
    maxConcurrent: 0,
    delayMs: 0,
    dropHeld() {
      for (const res of held) res.destroy();
      held.length = 0;
    },
    async waitFor(n, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (receiver.received.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} deliveries, got ${receiver.received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return receiver.received;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const held: http.ServerResponse[] = [];
  let concurrent = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const delivery: ReceivedDelivery = { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string>, at: Date.now() };
      const index = receiver.received.length;
      receiver.received.push(delivery);
      if (receiver.hold) {
        held.push(res);
        return;
      }
      concurrent++;
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, concurrent);
      setTimeout(() => {
        concurrent--;
        const status = typeof receiver.answer === 'function' ? receiver.answer(delivery, index) : receiver.answer;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(receiver.answerBody);
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}${path}`;
  return receiver;
}
