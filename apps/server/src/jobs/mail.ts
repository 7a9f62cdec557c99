/**
 * The outbox's mail consumer: a `mail.queued` event makes its message ready to send, and the mail
 * worker of this process is woken once that commits (mail/worker.ts sends, with retries). The
 * consumer never sends itself: one failing address must not hold up the events behind it.
 */
import type { OutboxConsumer } from './outbox-runner.js';
import { mailReady } from '../mail/wakeup.js';

export const mailConsumer: OutboxConsumer = {
  name: 'mail',
  types: ['mail.queued'],
  async handle(trx, events, now) {
    const ids = events.map((e) => Number((e.event.data as { mail_id: number }).mail_id));
    if (ids.length > 0) await trx('mail_messages').whereIn('id', ids).where({ status: 'queued' }).update({ status: 'ready', next_attempt_at: now });
  },
  committed: mailReady,
};
