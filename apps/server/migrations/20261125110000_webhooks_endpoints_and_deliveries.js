// Outbound webhooks (docs/webhooks.md): a workspace's endpoints, one delivery row per event and
// endpoint (written by the outbox consumer in the cursor's transaction), and each attempt's outcome
// for the delivery log.
//
// A delivery is claimed by one process at a time through its lease (`lease_until`, `lease_owner`):
// a process that dies mid-attempt leaves a lease that expires, and the delivery is tried again.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable();
    // A partner's postback endpoint (managed by the workspace's owner for the partner).
    t.integer('partner_id');
    t.integer('program_id');
    t.string('url', 2048).notNullable();
    t.string('description', 200);
    // Comma-separated event types.
    t.text('event_types').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.string('disabled_reason', 20);
    t.bigInteger('disabled_at');
    t.bigInteger('failing_since');
    // The signing secrets (current, and the previous one during a rotation) as one sealed JSON value
    // (secrets/secret-box.ts): never null, so the key-id check at start reads every row.
    t.text('secrets_sealed').notNullable();
    t.bigInteger('previous_secret_expires_at');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['workspace_id']);
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id');
    t.integer('endpoint_id').notNullable();
    // The `webhook-id` header: the event's id, the same on every attempt.
    t.string('message_id', 48).notNullable();
    t.string('event_type', 64).notNullable();
    // The body exactly as sent on every attempt.
    t.text('payload').notNullable();
    t.string('status', 12).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at');
    // Retried until then: 3 days after the event, or after a resend.
    t.bigInteger('retry_until').notNullable();
    t.bigInteger('lease_until');
    t.string('lease_owner', 40);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('delivered_at');
    t.unique(['endpoint_id', 'message_id']);
    // The workers' claim: due deliveries in order.
    t.index(['status', 'next_attempt_at']);
    t.index(['endpoint_id', 'id']);
  });
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id');
    t.bigInteger('delivery_id').notNullable();
    t.integer('attempt').notNullable();
    t.bigInteger('started_at').notNullable();
    t.integer('duration_ms');
    t.integer('status_code');
    t.text('response_body');
    t.string('error', 300);
    t.boolean('succeeded').notNullable();
    t.index(['delivery_id', 'attempt']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTableIfExists('webhook_attempts');
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
