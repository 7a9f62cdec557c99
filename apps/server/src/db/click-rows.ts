/**
 * The rows of a click batch, shared by the batcher (click-batcher.ts), the writer thread's parent
 * side (click-writer-thread.ts) and the click route: the column lists of the rows a click writes,
 * the reduced batch, and the interface of whatever commits it.
 */

/**
 * The columns of the rows a click writes, in the order of each row's values. Rows travel as arrays
 * (to the writer thread, into statements): objects of this many keys were the costliest step of
 * building a click, and of copying a batch to the thread.
 */
export const CUSTOMER_COLUMNS = ['click_id', 'program_id', 'partner_id', 'link_id', 'status', 'is_test', 'click_at', 'created_at'] as const;
export const CLICK_EVENT_COLUMNS = [
  'program_id',
  'link_id',
  'partner_id',
  'click_id',
  'is_test',
  'session_id',
  'page_url',
  'page_title',
  'referrer_url',
  'screen_resolution',
  'viewport_size',
  'language',
  'timezone',
  'user_agent',
  'geo_country',
  'geo_region',
  'geo_city',
  'device_type',
  'device_os',
  'browser_name',
  'click_timestamp',
  'created_at',
  // Last: version 3 of PostgreSQL's batch function takes the earlier columns in their order, then this one.
  'is_bot',
] as const;
export type Row = unknown[];

/** A row as an object, for knex (test clicks are written outside the batch). */
export function rowObject(columns: readonly string[], row: Row): Record<string, unknown> {
  return Object.fromEntries(columns.map((c, i) => [c, row[i]]));
}

/**
 * The columns of the outbox rows a batch writes (outbox_events, one `clicks.recorded` per program
 * in the batch), in the order of each row's values. The writer adds `workspace_id`, read from the
 * program's row in the same statement; `actor` stays null (tracking traffic has none).
 */
export const CLICK_OUTBOX_COLUMNS = ['event_id', 'type', 'version', 'program_id', 'payload', 'occurred_at'] as const;

/** One batch, reduced: rows to insert, and counter increments summed per row in key order. */
export interface BatchRows {
  customers: Row[];
  events: Row[];
  /** The batch's domain events (CLICK_OUTBOX_COLUMNS), committed with its clicks. */
  outbox: Row[];
  links: Array<{ id: number; n: number; at: number }>;
  enrollments: Array<{ partnerId: number; programId: number; n: number; at: number }>;
}

/** Commits one reduced batch atomically: all of it or nothing. */
export interface BatchWriter {
  /** Batches committing at once. */
  readonly maxInFlight: number;
  write(rows: BatchRows): Promise<void>;
  close(): Promise<void>;
}
