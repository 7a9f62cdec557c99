/**
 * Events: the stats panel (from the rollups: totals, a series, a breakdown; docs/analytics.md) and
 * the listing of spec 4.6 as a table with type, date and bot filters and pagination.
 */
import { useEffect, useState } from 'preact/hooks';
import { EVENT_TYPES, LIMITS, type EventType, type NormalizedEvent } from '@reftrack/contract';
import type { DashboardProgram } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { navigate } from '../lib/router.js';
import { checkDateRange } from '../lib/validate.js';
import { addDays, daysBetween, EVENT_TYPE_LABELS, formatDateTime, formatMoney, plural, utcDay } from '../lib/format.js';
import { AccessMissing, ErrorNotice, isForbidden, Loading, PageSizeField, Pager } from '../components/ui.js';
import { StatsPanel } from '../components/stats-panel.js';
import { browserTimeZone, todayIn } from '../lib/stats-view.js';
import { DataTable } from '../components/data-table.js';

const PAGE_SIZES = [10, 25, 50, 100];
const CHART_DEFAULT_DAYS = 14;
const CHART_MAX_DAYS = 92;

export interface EventFilters {
  type: '' | EventType;
  from: string;
  to: string;
  page: number;
  size: number;
  /** Clicks of known bots in the listing: all clicks (''), without them, or only them. */
  bots: '' | 'exclude' | 'only';
}

const BOT_CHOICES = [
  { value: '', label: 'All clicks' },
  { value: 'exclude', label: 'Without bots' },
  { value: 'only', label: 'Only bots' },
] as const;

export function filtersFromQuery(q: URLSearchParams): EventFilters {
  const type = q.get('type') ?? '';
  const page = Number(q.get('page'));
  const size = Number(q.get('size'));
  const day = (v: string | null) => (v && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : '');
  return {
    type: (EVENT_TYPES as readonly string[]).includes(type) ? (type as EventType) : '',
    from: day(q.get('from')),
    to: day(q.get('to')),
    page: Number.isInteger(page) && page > 0 ? page : 1,
    size: PAGE_SIZES.includes(size) ? size : LIMITS.eventListingDefaultPageSize,
    bots: q.get('bots') === 'exclude' || q.get('bots') === 'only' ? (q.get('bots') as 'exclude' | 'only') : '',
  };
}

export function queryFromFilters(f: EventFilters): string {
  const q = new URLSearchParams();
  if (f.type) q.set('type', f.type);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  if (f.page > 1) q.set('page', String(f.page));
  if (f.size !== LIMITS.eventListingDefaultPageSize) q.set('size', String(f.size));
  if (f.bots) q.set('bots', f.bots);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The chart's days: the filter's dates, or the last two weeks; at most CHART_MAX_DAYS. */
export function chartRange(f: Pick<EventFilters, 'from' | 'to'>, today = utcDay(new Date())): { from: string; to: string; clipped: boolean } {
  const to = f.to || (f.from && f.from > today ? f.from : today);
  let from = f.from || addDays(to, -(CHART_DEFAULT_DAYS - 1));
  let clipped = false;
  if (daysBetween(from, to) >= CHART_MAX_DAYS) {
    from = addDays(to, -(CHART_MAX_DAYS - 1));
    clipped = true;
  }
  return { from, to, clipped };
}

/** What to say about the end of the listing (4.6 rule 2: the 3 × pageSize window). */
export function endNote(f: EventFilters, rows: number, pagination: { page: number; pageCount: number; total: number }): string | null {
  const window = LIMITS.eventListingWindowMultiplier * f.size;
  const atEnd = pagination.pageCount === 0 || f.page >= pagination.pageCount;
  if (!atEnd) return null;
  const beyond = rows === 0 && f.page > Math.max(1, pagination.pageCount);
  const capped = pagination.total >= window;
  const parts: string[] = [];
  if (beyond) parts.push(`This page is past the end: the listing holds ${plural(pagination.total, 'event')} for these filters, and pages beyond that are empty.`);
  else parts.push(pagination.total === 0 ? 'No events match these filters.' : `End of the listing (${plural(pagination.total, 'event')}).`);
  if (capped) {
    parts.push(
      `The listing reads only the newest ${window} events of each type (3 × page size of ${f.size}) before merging them, so older events exist beyond this point but are not reached by paging. Narrow the From and To dates to see them, or choose a larger page size.`,
    );
  }
  return parts.join(' ');
}

export function EventsTab({ program, query }: { program: DashboardProgram; query: URLSearchParams }) {
  const f = filtersFromQuery(query);
  const [draft, setDraft] = useState({ type: f.type as string, from: f.from, to: f.to, size: String(f.size), bots: f.bots as string });
  const [invalid, setInvalid] = useState<string | null>(null);
  const qs = query.toString();
  useEffect(() => setDraft({ type: f.type, from: f.from, to: f.to, size: String(f.size), bots: f.bots }), [qs]);

  const listing = useLoad(
    () => api.events(program.id, { page: f.page, pageSize: f.size, eventType: f.type || undefined, dateFrom: f.from || undefined, dateTo: f.to || undefined, bots: f.bots || undefined }),
    [program.id, qs],
  );
  const [timeZone] = useState(browserTimeZone);
  const today = todayIn(timeZone);
  const range = chartRange(f, today);

  if (isForbidden(listing.error)) return <AccessMissing error={listing.error} what="this program's event listing" />;

  const base = `/programs/${program.id}/events`;
  function apply(e: Event) {
    e.preventDefault();
    const checked = checkDateRange(draft.from, draft.to);
    if (!checked.ok) return setInvalid(checked.message);
    setInvalid(null);
    navigate(base + queryFromFilters({ type: draft.type as EventFilters['type'], from: draft.from, to: draft.to, page: 1, size: Number(draft.size), bots: draft.bots as EventFilters['bots'] }));
  }
  const pagination = listing.data?.meta.pagination;
  const rows = listing.data?.data ?? [];
  // The page the rows on screen belong to: while the next page loads, the pager and the note keep
  // describing what is shown, not the page asked for.
  const shownPage = pagination?.page ?? f.page;
  const note = pagination ? endNote({ ...f, page: shownPage }, rows.length, pagination) : null;
  const pageLink = (page: number) => base + queryFromFilters({ ...f, page });

  return (
    <>
      <StatsPanel programId={program.id} initial={{ from: range.from, to: range.to, today }} timeZone={timeZone} />
      {range.clipped ? <p class="muted">The stats start with the last {CHART_MAX_DAYS} days of the listing's dates; choose a longer range above.</p> : null}

      <section class="panel" aria-labelledby="events-title">
        <h2 id="events-title">Events</h2>
        <form class="filters" onSubmit={apply} noValidate aria-label="Event filters">
          <div class="field">
            <label for="f-type">Type</label>
            <select id="f-type" name="type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value })}>
              <option value="">All types</option>
              {EVENT_TYPES.map((t) => (
                <option value={t} key={t}>
                  {EVENT_TYPE_LABELS[t]}s
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="f-from">From</label>
            <input id="f-from" name="dateFrom" type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} aria-invalid={Boolean(invalid)} />
          </div>
          <div class="field">
            <label for="f-to">To</label>
            <input id="f-to" name="dateTo" type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} aria-invalid={Boolean(invalid)} />
          </div>
          <div class="field">
            <label for="f-bots">Bots</label>
            <select id="f-bots" name="bots" value={draft.bots} onChange={(e) => setDraft({ ...draft, bots: e.currentTarget.value })}>
              {BOT_CHOICES.map((b) => (
                <option value={b.value} key={b.value}>
                  {b.label}
                </option>
              ))}
            </select>
          </div>
          <PageSizeField id="f-size" sizes={PAGE_SIZES} value={draft.size} onChange={(size) => setDraft({ ...draft, size })} />
          <div class="filter-actions">
            <button type="submit">Apply</button>
            {qs ? (
              <a class="button secondary" href={base}>
                Clear
              </a>
            ) : null}
          </div>
        </form>
        <p class="muted small">Dates are whole days in UTC and include both ends.</p>
        {invalid ? (
          <p class="notice error" role="alert">
            {invalid}
          </p>
        ) : null}
        {listing.loading && !listing.data ? <Loading what="events" /> : null}
        <ErrorNotice error={listing.error} />
        {listing.data ? <EventTable events={rows} /> : null}
        {pagination ? (
          <Pager label="Event pages" page={shownPage} pageCount={pagination.pageCount} total={plural(pagination.total, 'event')} link={pageLink} />
        ) : null}
        {note ? (
          <p class="notice info end-note" role="note">
            {note}
          </p>
        ) : null}
      </section>
    </>
  );
}

function details(e: NormalizedEvent) {
  switch (e.event_type) {
    case 'click':
      return [
        e.page_url,
        [e.geo_city, e.geo_country].filter(Boolean).join(', '),
        [e.device_type, e.device_os, e.browser_name].filter(Boolean).join(' · '),
        e.converted ? 'converted' : '',
      ]
        .filter(Boolean)
        .join(' — ');
    case 'lead':
      return [e.customer_key ? `customer ${e.customer_key}` : '', e.page_url, e.converted ? 'converted' : ''].filter(Boolean).join(' — ');
    case 'conversion':
      return [formatMoney(e.amount_cents, e.currency), e.processor_event_id, e.payment_status, e.sale_type, e.is_recurring ? 'recurring' : ''].filter(Boolean).join(' — ');
  }
}

function EventTable({ events }: { events: NormalizedEvent[] }) {
  if (events.length === 0) return <p>No events on this page.</p>;
  return (
    <DataTable label="Events table" columns={['Time', 'Type', 'Click id', 'Details']} class="events" cards>
      {events.map((e) => (
        <tr key={`${e.event_type}-${e.id}`} role="row">
          <td class="time" role="cell">
            <time dateTime={e.timestamp}>{formatDateTime(e.timestamp)}</time>
          </td>
          <td class="kind" role="cell">
            <span class={`type type-${e.event_type}`}>{EVENT_TYPE_LABELS[e.event_type]}</span>
          </td>
          <td class="click-id" role="cell">
            <code class="clip" title={e.click_id ?? undefined}>{e.click_id ?? '—'}</code>
          </td>
          <td class="details" role="cell">{details(e)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
