// Payment-processor intake (6.1): one row per received Stripe event, deduplicated by a unique
// constraint on the event id (per receiving program) and written in the same transaction as the
// event's effects, so a failure leaves nothing and Stripe's retry processes the event again.
// `processor_payments` links a payment (payment intent or charge) to the invoice it paid, so
// refunds and disputes of subscription payments find their sale on Stripe API versions where a
// charge no longer names its invoice.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('processor_events', (t) => {
    t.increments('id');
    t.string('provider', 20).notNullable().defaultTo('stripe');
    t.string('event_id', 255).notNullable();
    t.string('type', 100).notNullable();
    // The program whose signing secret verified the event (an event reaches each endpoint once).
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    t.string('account', 255);
    t.boolean('livemode');
    // processing (inside the transaction), then recorded | already_recorded | reversed | linked | ignored
    t.string('action', 32).notNullable();
    t.string('reason', 64);
    t.integer('sale_id');
    t.bigInteger('event_created_at');
    t.bigInteger('received_at').notNullable();
    // Dedup: one row per event id and receiving program. Stripe event ids are unique; the program
    // is part of the key only so that two endpoints (two secrets) of one account each get the event.
    t.unique(['event_id', 'program_id']);
    t.index(['program_id', 'received_at']);
  });
  await knex.schema.createTable('processor_payments', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    // pi_… or ch_…
    t.string('payment_ref', 255).notNullable();
    t.string('invoice_id', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['program_id', 'payment_ref']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTableIfExists('processor_payments');
  await knex.schema.dropTableIfExists('processor_events');
}
