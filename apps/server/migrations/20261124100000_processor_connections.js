// Processor connections (docs/stripe.md): one row per program connected to Stripe, with the
// connection's own intake address (`endpoint_id`, unguessable, unique) and its webhook signing
// secret encrypted at rest (`secret_ciphertext`, the secret box's versioned text format).
//
// Before this release the account id and the plaintext secret were columns of `programs`. A
// migration has no encryption key, so the move happens in code right after migrating, at start
// and in `reftrack-server migrate` (src/db/processor-connections.ts: each connected program gets
// a connection with its secret encrypted, and both old columns are cleared). The old columns stay
// (always empty from then on): dropping a column of `programs` on SQLite rebuilds the table.
//
// `down` drops the table: without the key the secrets cannot be put back in plain text, so after
// going back each program must be connected again.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('processor_connections', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().unique().references('programs.id').onDelete('CASCADE');
    t.string('provider', 20).notNullable().defaultTo('stripe');
    // acct_…; empty only for a connection carried over from an older release without one.
    t.string('account_id', 255).index();
    // whe_ + 32 base62 characters: the path of the connection's own intake address.
    t.string('endpoint_id', 64).notNullable().unique();
    t.text('secret_ciphertext').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTableIfExists('processor_connections');
}
