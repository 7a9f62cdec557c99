/**
 * The mail worker (docs/partners.md, "E-mail"): sends ready messages through the transport and
 * records the outcome. A message is claimed by one conditional UPDATE (one process sends it);
 * a failure is retried with back-off up to PORTAL_LIMITS.mailAttempts, then marked failed; a
 * process that dies mid-send leaves its claim to expire and another retries (at least once).
 * The body is cleared once sent over SMTP; the development mailbox keeps it (encrypted) to show it.
 */
import type { Knex } from 'knex';
import { PORTAL_LIMITS } from '@reftrack/contract';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { openMailBody } from './queue.js';
import type { MailTransport } from './transport.js';
import { onMailReady } from './wakeup.js';

const POLL_MS = 2000;
/** How long a claim holds a message: longer than a send may take. */
const CLAIM_MS = 60_000;
const backoffMs = (attempt: number): number => Math.min(60 * 60_000, 5_000 * 2 ** (attempt - 1));

export interface MailWorkerDeps {
  db: Knex;
  secrets: SecretBox;
  now: () => number;
  logger: Logger;
  transport: MailTransport;
  from: string;
}

export class MailWorker {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private unsubscribe?: () => void;

  constructor(private readonly deps: MailWorkerDeps) {}

  start(): void {
    this.unsubscribe = onMailReady(() => this.poke());
    this.timer = setInterval(() => this.poke(), POLL_MS);
    this.timer.unref();
    this.poke();
  }

  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .then(() => undefined)
      .catch((err: unknown) => this.deps.logger.error({ err: (err as Error).message }, 'mail worker pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  /**
   * Sends every message due now (tests call it after draining the outbox) and returns once each has
   * been attempted: a background pass may have claimed some of them first (a claimed message is no
   * longer due to this pass), so the passes running meanwhile are waited for as well.
   */
  async runDue(): Promise<number> {
    const sent = await this.pass();
    while (this.running) await this.running;
    return sent;
  }

  /** One pass: claims each due message (one conditional UPDATE, so one process sends it) and sends it. */
  private async pass(): Promise<number> {
    const { db, now } = this.deps;
    let sent = 0;
    const due = await db('mail_messages').whereIn('status', ['ready', 'sending']).where('next_attempt_at', '<=', now()).orderBy('id').limit(50).select('id', 'status', 'next_attempt_at');
    for (const row of due) {
      const claimed = await db('mail_messages')
        .where({ id: row.id, status: row.status, next_attempt_at: row.next_attempt_at })
        .update({ status: 'sending', next_attempt_at: now() + CLAIM_MS, attempts: db.raw('attempts + 1') });
      if (claimed !== 1) continue;
      if (await this.send(Number(row.id))) sent++;
    }
    return sent;
  }

  private async send(id: number): Promise<boolean> {
    const { db, now, logger, transport } = this.deps;
    const row = await db('mail_messages').where({ id }).first('to_address', 'subject', 'body_sealed', 'attempts', 'kind');
    if (!row?.body_sealed) return false;
    try {
      const body = openMailBody(this.deps.secrets, row.body_sealed);
      await transport.send({ from: this.deps.from, to: row.to_address, subject: row.subject, text: body.text, html: body.html });
      await db('mail_messages').where({ id }).update({ status: 'sent', sent_at: now(), last_error: null, transport: transport.name, ...(transport.keepsBody ? {} : { body_sealed: null }) });
      logger.info({ mail_id: id, kind: row.kind, transport: transport.name }, 'mail sent');
      return true;
    } catch (err) {
      const attempts = Number(row.attempts);
      const failed = attempts >= PORTAL_LIMITS.mailAttempts;
      const message = String((err as Error).message ?? err).slice(0, 500);
      await db('mail_messages').where({ id }).update({ status: failed ? 'failed' : 'ready', next_attempt_at: failed ? null : now() + backoffMs(attempts), last_error: message, ...(failed ? { body_sealed: null } : {}) });
      logger.warn({ mail_id: id, kind: row.kind, attempts, failed, err: message }, 'mail not sent');
      return false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.running;
  }
}
