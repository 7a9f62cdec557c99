/** Every consumer of the outbox, by where it runs (jobs/outbox-runner.ts). */
import type { OutboxConsumer } from './outbox-runner.js';
import { auditLogConsumer } from './audit-log.js';
import { webhookDeliveryConsumer } from './webhook-deliveries.js';
import { mailConsumer } from './mail.js';
import { statsConversionsConsumer } from './stats-conversions.js';
import { statsClicksConsumer } from './stats-clicks.js';

/** On the event loop, in the order a pass runs them: their work rows wake workers of the event loop. */
export const OUTBOX_CONSUMERS: readonly OutboxConsumer[] = [auditLogConsumer, webhookDeliveryConsumer, mailConsumer];

/**
 * In the stats thread (jobs/stats-thread.ts), with a database connection of its own: the rollup
 * upserts of a lead or sale (~30 rows each) cost the event loop more than the lead itself did
 * (docs/performance.md, "The stats thread").
 */
export const STATS_CONSUMERS: readonly OutboxConsumer[] = [statsClicksConsumer, statsConversionsConsumer];
