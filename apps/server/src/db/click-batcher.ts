/**
 * Group commit for the click route ("The hot write path" in the design): requests put their rows
 * into a shared batch; the batch commits as one transaction, with counter increments summed per
 * link and per partner-program; each request is answered only after its batch committed. A failed
 * batch rejects every request in it and leaves nothing behind (one transaction). The batch is
 * committed by a writer thread (click-writer-thread.ts).
 *
 * Each batch also appends one `clicks.recorded` event per program to the outbox, in its
 * transaction: the clicks per link, the first and last click's time, and the clicks summed per
 * link, hour and dimensions for the stats rollups. Clicks themselves are not events; a consumer
 * learns of them per batch. A committed batch pokes the outbox runner at most once a second
 * (OutboxRunner.clicksCommitted, through `observe` in server.ts): a pass per batch cost the SQLite
 * click route a fifth of its rate (docs/performance.md).
 */
import { DOMAIN_EVENT_VERSIONS, type DomainEvent } from '@reftrack/contract';
import type { DatabaseConfig } from '../config.js';
import { newEventId } from '../domain/ids.js';
import { sqliteThreadWriter } from './click-writer-thread.js';
import { postgresClickWriter } from './postgres-click-writer.js';
import type { BatchRows, BatchWriter, Row } from './click-rows.js';
import { UniqueClickWindow, type Visitor } from '../domain/unique-clicks.js';
import { HOUR_MS } from './stats-rollups.js';

export interface ClickWrite {
  /** A new customer row (CUSTOMER_COLUMNS), or undefined when an existing customer is reused (3.1). */
  customer?: Row;
  /** The click event row (CLICK_EVENT_COLUMNS). */
  event: Row;
  linkId: number;
  partnerId: number;
  programId: number;
  at: number;
  /** A known bot's click: recorded and flagged, counted only as a bot click (docs/analytics.md). */
  bot: boolean;
  /** The visitor's keys for unique clicks (unique-clicks.ts). */
  visitors: readonly Visitor[];
  /** The click's dimension values (click-dimensions.ts); null for a bot. */
  dims: string[] | null;
}

interface Pending {
  write: ClickWrite;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Clicks per transaction at most; a longer queue goes out in several batches. */
const MAX_BATCH = 500;

/**
 * A batch this large goes to the writer at once, while a writer slot is free, rather than at the
 * end of the event loop's turn: it commits while the loop reads and answers the other requests.
 * Otherwise the clients of one answered batch come back together, form the next batch together,
 * and the loop waits idle through each commit (docs/performance.md, "Where the time goes").
 */
const EARLY_BATCH = 30;

export class ClickBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  private readonly unique: UniqueClickWindow;

  /**
   * `observe`: each batch's size, commit time and outcome, for the metrics (ops/metrics.ts).
   * `uniqueWindowMs`: the unique-click window (UNIQUE_CLICK_WINDOW_MINUTES).
   */
  constructor(
    private readonly writer: BatchWriter,
    private readonly observe?: (size: number, seconds: number, ok: boolean) => void,
    uniqueWindowMs = 86_400_000,
  ) {
    this.unique = new UniqueClickWindow(uniqueWindowMs);
  }

  /** Clicks waiting for a batch, and batches being committed. */
  depth(): { queued: number; inFlight: number } {
    return { queued: this.queue.length, inFlight: this.inFlight };
  }

  submit(write: ClickWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (this.queue.length >= EARLY_BATCH && this.inFlight < this.writer.maxInFlight) void this.flush();
      else this.schedule();
    });
  }

  /** Resolves once everything submitted so far has been committed or failed. */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drains, then releases the writer (its thread or nothing). */
  async close(): Promise<void> {
    await this.drain();
    await this.writer.close();
  }

  private schedule(): void {
    if (this.inFlight >= this.writer.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // One turn of the event loop lets the requests already read off the sockets join this batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.writer.maxInFlight) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) {
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.inFlight++;
    const started = performance.now();
    try {
      await this.writer.write(reduce(batch, this.unique));
      this.observe?.(batch.length, (performance.now() - started) / 1000, true);
      for (const p of batch) p.resolve();
    } catch (err) {
      this.observe?.(batch.length, (performance.now() - started) / 1000, false);
      for (const p of batch) p.reject(err);
    } finally {
      this.inFlight--;
    }
    if (this.queue.length > 0) this.schedule();
    else if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

/** A link's clicks in the batch. A link's partner and program are set when it is created. */
interface LinkCount {
  id: number;
  n: number;
  /** The last click's time (the counter row's last_clicked). */
  at: number;
  partnerId: number;
  programId: number;
}

/** The clicks of one link, UTC hour and dimensions in the batch (a bot's click: dimensions null). */
interface ClickGroup {
  /** The group's first click: its link, hour and dimensions are the group's. */
  click: ClickWrite;
  /** The UTC hour of the group's clicks, in hours since the epoch. */
  hour: number;
  /** The group's earliest and latest click times. */
  first: number;
  last: number;
  clicks: number;
  unique: number;
  bots: number;
}

/** Whether two clicks' dimension values are the same, value by value. */
function sameDimensions(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The group of the batch this click belongs to: same link and program, hour and bot flag, and for
 * a human's click the same dimension values. A batch holds a few groups per link, so they are found
 * by comparing values: a string key per click (its numbers and seven dimension values joined, then
 * hashed by the Map) cost about a quarter of the batch's sums (docs/performance.md, "The batch's
 * sums without string keys").
 */
function groupOf(byLink: Map<number, ClickGroup[]>, all: ClickGroup[], w: ClickWrite): ClickGroup {
  const hour = Math.floor(w.at / HOUR_MS);
  let groups = byLink.get(w.linkId);
  if (!groups) byLink.set(w.linkId, (groups = []));
  for (const group of groups) {
    const c = group.click;
    if (group.hour === hour && c.bot === w.bot && c.programId === w.programId && (w.bot || sameDimensions(c.dims, w.dims))) return group;
  }
  const group: ClickGroup = { click: w, hour, first: w.at, last: w.at, clicks: 0, unique: 0, bots: 0 };
  groups.push(group);
  all.push(group);
  return group;
}

/**
 * The batch's rows: its clicks, its counter increments, and per program one `clicks.recorded`
 * event carrying the batch's clicks summed per link, hour and dimensions for the rollups. A bot's
 * click is recorded and summed as a bot click only: no link or partner counter, no `clicks`
 * count, no unique click.
 */
function reduce(batch: Pending[], unique: UniqueClickWindow): BatchRows {
  const customers: Row[] = [];
  const events: Row[] = [];
  const links = new Map<number, LinkCount>();
  // A batch's clicks mostly share link, hour and dimensions: summed here, they travel as a few
  // entries of the outbox event, and the stats consumer adds a pass's worth of batches to the
  // rollups at once (jobs/stats-clicks.ts) — the click batch itself writes no rollup row.
  const groupsByLink = new Map<number, ClickGroup[]>();
  const groups: ClickGroup[] = [];
  for (const { write: w } of batch) {
    if (w.customer) customers.push(w.customer);
    events.push(w.event);
    const group = groupOf(groupsByLink, groups, w);
    if (w.at > group.last) group.last = w.at;
    else if (w.at < group.first) group.first = w.at;
    if (w.bot) {
      group.bots += 1;
      continue;
    }
    group.clicks += 1;
    if (unique.countOnce(w.linkId, w.visitors, w.at)) group.unique += 1;
    const link = links.get(w.linkId);
    if (link) {
      link.n += 1;
      if (w.at > link.at) link.at = w.at;
    } else {
      links.set(w.linkId, { id: w.linkId, n: 1, at: w.at, partnerId: w.partnerId, programId: w.programId });
    }
  }
  // Rows are locked in one order (by key) so that two batches in flight cannot deadlock.
  const linkRows = [...links.values()].sort((a, b) => a.id - b.id);
  return { customers, events, outbox: clicksRecorded(linkRows, groups), links: linkRows, enrollments: enrollmentCounts(linkRows) };
}

/**
 * The partner-program counters' increments: a link belongs to one partner and one program, so
 * they are its links' counts summed, in (partner, program) order.
 */
function enrollmentCounts(links: LinkCount[]): BatchRows['enrollments'] {
  const byEnrollment = new Map<string, { partnerId: number; programId: number; n: number; at: number }>();
  for (const { partnerId, programId, n, at } of links) {
    const key = `${partnerId}:${programId}`;
    const pp = byEnrollment.get(key);
    if (pp) {
      pp.n += n;
      if (at > pp.at) pp.at = at;
    } else {
      byEnrollment.set(key, { partnerId, programId, n, at });
    }
  }
  return [...byEnrollment.values()].sort((a, b) => a.partnerId - b.partnerId || a.programId - b.programId);
}

const CLICKS_RECORDED = 'clicks.recorded';
const CLICKS_RECORDED_VERSION = DOMAIN_EVENT_VERSIONS[CLICKS_RECORDED];

/** A program's part of the batch: its links' counts (sorted by link id) and its click groups. */
interface ProgramPart {
  links: LinkCount[];
  groups: ClickGroup[];
  first: number;
  last: number;
}

/**
 * One `clicks.recorded` outbox row (CLICK_OUTBOX_COLUMNS) per program with clicks in the batch
 * (bots included), in program order. The event occurred at the program's last click in the batch;
 * its id starts with that time, so new rows append to the event-id index.
 */
function clicksRecorded(links: LinkCount[], groups: Iterable<ClickGroup>): Row[] {
  const parts = new Map<number, ProgramPart>();
  const partOf = (programId: number): ProgramPart => {
    let part = parts.get(programId);
    if (!part) parts.set(programId, (part = { links: [], groups: [], first: Infinity, last: -Infinity }));
    return part;
  };
  for (const link of links) partOf(link.programId).links.push(link);
  for (const group of groups) {
    const part = partOf(group.click.programId);
    part.groups.push(group);
    if (group.first < part.first) part.first = group.first;
    if (group.last > part.last) part.last = group.last;
  }
  const rows: Row[] = [];
  for (const programId of [...parts.keys()].sort((a, b) => a - b)) {
    const part = parts.get(programId)!;
    let clicks = 0;
    for (const link of part.links) clicks += link.n;
    const data: DomainEvent<typeof CLICKS_RECORDED>['data'] = {
      program_id: programId,
      clicks,
      links: part.links.map((link) => ({ link_id: link.id, partner_id: link.partnerId, clicks: link.n })),
      first_at: new Date(part.first).toISOString(),
      last_at: new Date(part.last).toISOString(),
      rollups: part.groups.map(({ click, hour, clicks: n, unique, bots }) => ({
        link_id: click.linkId,
        partner_id: click.partnerId,
        hour: new Date(hour * HOUR_MS).toISOString(),
        dims: click.bot ? null : click.dims,
        clicks: n,
        unique_clicks: unique,
        bot_clicks: bots,
      })),
    };
    rows.push([newEventId(part.last), CLICKS_RECORDED, CLICKS_RECORDED_VERSION, programId, JSON.stringify(data), part.last]);
  }
  return rows;
}

/** The batch writer of this database: a writer thread on SQLite, a pool of two connections on PostgreSQL. */
export function clickWriterFor(database: DatabaseConfig): BatchWriter {
  return database.client === 'sqlite' ? sqliteThreadWriter(database.filename) : postgresClickWriter(database.connectionString, database.schema);
}
