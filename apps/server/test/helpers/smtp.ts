/** A real SMTP server in-process (smtp-server): what the Reftrack server sends arrives here, parsed enough to read links. */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtp {
  url: string;
  messages: ReceivedMail[];
  /** While set, every message is refused with a 451 (a temporary failure the sender must retry). */
  refuse: boolean;
  /** Milliseconds the answer to each message's data is held back (a slow server). */
  delayMs: number;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<TestSmtp> {
  const state: TestSmtp = { url: '', messages: [], refuse: false, delayMs: 0, close: async () => undefined };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) {
          const err = Object.assign(new Error('Try again later'), { responseCode: 451 });
          callback(err);
          return;
        }
        const accept = () => {
          state.messages.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        };
        if (state.delayMs > 0) setTimeout(accept, state.delayMs);
        else accept();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  state.url = `smtp://127.0.0.1:${port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

/** The first link to `path` in a received message (quoted-printable soft breaks undone). */
export function linkIn(mail: ReceivedMail, path: string): string {
  const body = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const m = new RegExp(`https?://[^\\s"<>]*${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_-]+`).exec(body);
  if (!m) throw new Error(`no ${path} link in: ${body.slice(0, 500)}`);
  return m[0];
}
