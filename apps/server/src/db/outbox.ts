/**
 * The outbox table (migrations/20261124120000_outbox_and_audit_log.js): appending events in the
 * writer's transaction, and reading them in commit order for a consumer (docs/architecture.md).
 */
import type { Knex } from 'knex';
import type { DomainEvent, DomainEventType, EventActor } from '@reftrack/contract';
import { DOMAIN_EVENT_VERSIONS } from '@reftrack/contract';
import { isSqlite } from './knex.js';
import { firstRow } from './statement.js';
import { newEventId } from '../domain/ids.js';

/** An event to append: the payload and whose it is. */
export interface NewEvent<T extends DomainEventType = DomainEventType> {
  type: T;
  programId: number | null;
  /** Null: taken from the program's workspace. */
  workspaceId?: number | null;
  data: DomainEvent<T>['data'];
  occurredAt: number;
  actor?: EventActor | null;
}

/** Where a consumer has read up to: (txid, id) on PostgreSQL, id alone on SQLite (txid 0). */
export interface OutboxPosition {
  txid: number;
  id: number;
}

export interface StoredEvent {
  position: OutboxPosition;
  event: DomainEvent;
  actor: EventActor | null;
}

// One INSERT per unit of work, its text cached per row count: the SQLite client keeps a prepared
// statement per SQL text. A row's workspace is the given one, else its program's (a subquery, so
// the caller needs no extra read).
const ROW = '(?, ?, ?, coalesce(?, (select workspace_id from programs where id = ?)), ?, ?, ?, ?)';
const insertSql: string[] = [];
const insertStatement = (rows: number): string =>
  (insertSql[rows] ??= `insert into outbox_events (event_id, type, version, workspace_id, program_id, payload, actor, occurred_at) values ${Array(rows).fill(ROW).join(', ')}`);

// A group commit on SQLite (db/atomic.ts) buffers the events of its units and writes them in one
// statement just before its commit: one INSERT per group instead of one per request. A unit or a
// savepoint that rolls back drops what it buffered (dropBufferedEvents), so the rows written are
// exactly those of the work that commits — still in the same transaction.
const buffers = new WeakMap<Knex.Transaction, Knex.RawBinding[][]>();
/** Rows per INSERT when a group's buffer is written (9 bindings a row, far below SQLite's limit). */
const FLUSH_ROWS = 500;

/** From now on `appendEvents(trx, …)` buffers until `flushBufferedEvents(trx)`. */
export function bufferEvents(trx: Knex.Transaction): void {
  buffers.set(trx, []);
}

/** How many events `trx` holds buffered (0 when it does not buffer): a mark to roll back to. */
export const bufferedEventCount = (trx: Knex.Transaction): number => buffers.get(trx)?.length ?? 0;

/** Forgets the events buffered after `mark` (their savepoint rolled back). */
export function dropBufferedEvents(trx: Knex.Transaction, mark: number): void {
  const buffer = buffers.get(trx);
  if (buffer && buffer.length > mark) buffer.length = mark;
}

/** Writes the buffered events in the transaction and stops buffering. */
export async function flushBufferedEvents(trx: Knex.Transaction): Promise<void> {
  const buffer = buffers.get(trx);
  buffers.delete(trx);
  for (let i = 0; buffer && i < buffer.length; i += FLUSH_ROWS) {
    const rows = buffer.slice(i, i + FLUSH_ROWS);
    await trx.raw(insertStatement(rows.length), rows.flat());
  }
}

/** An outbox row's columns: event_id, type, version, workspace_id (null: the program's), program_id, payload, actor, occurred_at. */
export type EventRow = [string, DomainEventType, number, number | null, number | null, string, string | null, number];

/** The row `e` is stored as, with a new event id. */
export function eventRow(e: NewEvent): EventRow {
  return [newEventId(e.occurredAt), e.type, DOMAIN_EVENT_VERSIONS[e.type], e.workspaceId ?? null, e.programId, JSON.stringify(e.data), e.actor ? JSON.stringify(e.actor) : null, e.occurredAt];
}

/** Appends `events` in the caller's transaction (in one statement, or to its group's buffer); answers their ids. */
export async function appendEvents(trx: Knex | Knex.Transaction, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids: string[] = [];
  const rows: Knex.RawBinding[][] = [];
  for (const e of events) {
    const [id, type, version, workspaceId, programId, payload, actor, occurredAt] = eventRow(e);
    ids.push(id);
    rows.push([id, type, version, workspaceId, programId, programId, payload, actor, occurredAt]);
  }
  const buffer = buffers.get(trx as Knex.Transaction);
  if (buffer) buffer.push(...rows);
  else await trx.raw(insertStatement(rows.length), rows.flat());
  return ids;
}

/**
 * The newest event committed now, in cursor order ((txid, id) on PostgreSQL, id on SQLite): where
 * a cursor stands once it has read everything written so far. Null when the outbox is empty.
 */
export async function outboxTail(db: Knex | Knex.Transaction): Promise<OutboxPosition | null> {
  const sqlite = isSqlite(db);
  const row = await db('outbox_events')
    .orderBy(sqlite ? [{ column: 'id', order: 'desc' }] : [{ column: 'txid', order: 'desc' }, { column: 'id', order: 'desc' }])
    .first(sqlite ? ['id'] : ['txid', 'id']);
  return row ? { txid: Number(row.txid ?? 0), id: Number(row.id) } : null;
}

function toStored(row: Record<string, unknown>): StoredEvent {
  return {
    position: { txid: Number(row.txid ?? 0), id: Number(row.id) },
    event: {
      id: row.event_id as string,
      type: row.type as DomainEventType,
      version: Number(row.version),
      occurred_at: new Date(Number(row.occurred_at)).toISOString(),
      workspace_id: row.workspace_id == null ? null : Number(row.workspace_id),
      program_id: row.program_id == null ? null : Number(row.program_id),
      data: JSON.parse(row.payload as string),
    },
    actor: row.actor == null ? null : (JSON.parse(row.actor as string) as EventActor),
  };
}

const COLUMNS = ['id', 'event_id', 'type', 'version', 'workspace_id', 'program_id', 'payload', 'actor', 'occurred_at'];

/** What a consumer's pass read: the events it wants, and the position of the last event looked at. */
export interface EventWindow {
  events: StoredEvent[];
  last: OutboxPosition | null;
  /** How many of the consumer's events were read: a full batch means there may be more. */
  scanned: number;
}

/**
 * The next events after `after` for a consumer, in commit order, that can never be preceded by an
 * event committed later: on PostgreSQL only rows of transactions older than every running one (see
 * the migration); on SQLite every committed row (one writer at a time).
 *
 * A consumer of some types (`types`) skips the others in SQL: up to `limit` of its events are read,
 * and when fewer exist the window ends at the last event visible now, so a busy outbox full of
 * other types costs such a consumer one indexed range per pass, not one pass per `limit` rows.
 */
export async function readEventsAfter(trx: Knex | Knex.Transaction, after: OutboxPosition, limit: number, types?: readonly DomainEventType[]): Promise<EventWindow> {
  const sqlite = isSqlite(trx);
  const visible = () => visibleAfter(trx, after);
  const order = sqlite ? [{ column: 'id' }] : [{ column: 'txid' }, { column: 'id' }];
  const tail = await visibleTail(trx, after);
  if (!tail) return { events: [], last: null, scanned: 0 };
  // Bounded by the tail: on PostgreSQL each statement has its own snapshot, and a row that became
  // visible after the tail was read must wait for the next pass, or the cursor would pass it twice.
  const query = (sqlite ? visible().where('id', '<=', tail.id) : visible().whereRaw('(txid, id) <= (?, ?)', [tail.txid, tail.id])).orderBy(order).limit(limit);
  ofTypes(query, types);
  const rows = await query.select(sqlite ? COLUMNS : [...COLUMNS, 'txid']);
  const events = rows.map(toStored);
  // A full batch: the next pass goes on from its last event. Otherwise everything visible was seen.
  const last = events.length === limit ? events[events.length - 1].position : tail;
  return { events, last, scanned: events.length };
}

/**
 * A consumer's types. One that reads no clicks also says so in the exact words of the partial index
 * of the other events (migration 20261128090000): both databases then walk that index, which click
 * batches' rows never enter, instead of reading every `clicks.recorded` between the cursor and the
 * tail only to skip it.
 */
function ofTypes(query: Knex.QueryBuilder, types: readonly DomainEventType[] | undefined): void {
  if (!types) return;
  query.whereIn('type', types as DomainEventType[]);
  if (!types.includes(CLICKS_RECORDED)) query.whereRaw(NOT_CLICKS);
}
const CLICKS_RECORDED: DomainEventType = 'clicks.recorded';
const NOT_CLICKS = `type <> '${CLICKS_RECORDED}'`;

/** Rows after `after`, in the order of positions. */
function rowsAfter(trx: Knex | Knex.Transaction, after: OutboxPosition): Knex.QueryBuilder {
  return isSqlite(trx) ? trx('outbox_events').where('id', '>', after.id) : trx('outbox_events').whereRaw('(txid, id) > (?, ?)', [after.txid, after.id]);
}

/** PostgreSQL: rows of transactions older than every running one (readEventsAfter). */
const PG_VISIBLE = 'txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint';

/** Rows after `after` that no event committed later can precede (readEventsAfter). */
function visibleAfter(trx: Knex | Knex.Transaction, after: OutboxPosition): Knex.QueryBuilder {
  return isSqlite(trx) ? rowsAfter(trx, after) : rowsAfter(trx, after).whereRaw(PG_VISIBLE);
}

// visibleAfter's rows, newest first, as fixed texts (db/statement.ts): every consumer pass reads the tail.
const SQLITE_TAIL = 'select id from outbox_events where id > ? order by id desc limit 1';
const PG_TAIL = `select id, txid from outbox_events where (txid, id) > (?, ?) and ${PG_VISIBLE} order by txid desc, id desc limit 1`;

/**
 * The position of the last event visible after `after` (readEventsAfter's rule), or null: where a
 * consumer with nothing to do for any event now moves its cursor without reading the events.
 */
export async function visibleTail(trx: Knex | Knex.Transaction, after: OutboxPosition): Promise<OutboxPosition | null> {
  const sqlite = isSqlite(trx);
  const tail = await firstRow<{ id: unknown; txid?: unknown }>(trx, sqlite ? SQLITE_TAIL : PG_TAIL, sqlite ? [after.id] : [after.txid, after.id]);
  return tail ? { txid: Number(tail.txid ?? 0), id: Number(tail.id) } : null;
}

/**
 * The events of an open chunked pass (jobs/outbox-runner.ts) again, after its thread died: those
 * after `after` up to and including `through`, the pass's last event. They are the same events
 * the pass first read — every one of them had committed when it read them, and none is deleted
 * before the outbox's retention — so the pass's rows come out the same.
 */
export async function readEventsThrough(trx: Knex | Knex.Transaction, after: OutboxPosition, through: OutboxPosition, types?: readonly DomainEventType[]): Promise<StoredEvent[]> {
  const sqlite = isSqlite(trx);
  const query = sqlite
    ? rowsAfter(trx, after).where('id', '<=', through.id).orderBy('id')
    : rowsAfter(trx, after).whereRaw('(txid, id) <= (?, ?)', [through.txid, through.id]).orderBy([{ column: 'txid' }, { column: 'id' }]);
  ofTypes(query, types);
  return (await query.select(sqlite ? COLUMNS : [...COLUMNS, 'txid'])).map(toStored);
}
