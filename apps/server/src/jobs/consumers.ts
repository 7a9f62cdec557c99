/** Every consumer of the outbox, in the order a pass runs them (jobs/outbox-runner.ts). */
import type { OutboxConsumer } from './outbox-runner.js';
import { auditLogConsumer } from './audit-log.js';
import { webhookDeliveryConsumer } from './webhook-deliveries.js';
import { mailConsumer } from './mail.js';
import { statsConversionsConsumer } from './stats-conversions.js';
import { statsClicksConsumer } from './stats-clicks.js';

export const OUTBOX_CONSUMERS: readonly OutboxConsumer[] = [auditLogConsumer, webhookDeliveryConsumer, mailConsumer, statsClicksConsumer, statsConversionsConsumer];
