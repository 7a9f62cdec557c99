/**
 * The program's stats (docs/analytics.md), from GET /api/dashboard/programs/:id/stats: a range
 * picker, the totals, the series as bars, one breakdown as a table with bars, and a CSV of what is
 * on screen. Bot clicks are counted apart and shown on request. The totals, the chart's input and
 * the breakdown table are shared with the partner portal's stats (portal/partner-stats.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { STATS_GROUP_BY, STATS_INTERVALS, type StatsGroupBy, type StatsInterval, type StatsMetrics, type StatsReport } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { checkDateRange } from '../lib/validate.js';
import { formatMoney } from '../lib/format.js';
import { amountsText, breakdownCsv, GROUP_LABELS, INTERVAL_LABELS, percent, presetRange, RANGE_PRESETS, seriesCsv, statsQuery, type StatsChoice } from '../lib/stats-view.js';
import type { DailySeries } from '../lib/chart-data.js';
import { ErrorNotice, isForbidden, Loading } from './ui.js';
import { EventsChart } from './chart.js';
import { DataTable, numeric } from './data-table.js';

const money = (minor: number, currency: string) => formatMoney(minor, currency);

/** The series as the bar chart's input: clicks (people only), leads and sales per bucket. */
export function chartSeries(report: StatsReport): DailySeries {
  const none = report.series.map(() => false);
  return {
    days: report.series.map((b) => b.start.slice(0, report.interval === 'hour' ? 16 : report.interval === 'month' ? 7 : 10).replace('T', ' ')),
    counts: { click: report.series.map((b) => b.clicks), lead: report.series.map((b) => b.leads), conversion: report.series.map((b) => b.sales) },
    atLeast: { click: none, lead: none, conversion: none },
    partial: false,
    requests: 1,
  };
}

function download(name: string, csv: string) {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function Totals({ m, conversion, bots }: { m: StatsMetrics; conversion: StatsReport['conversion']; bots: boolean }) {
  const items: Array<[string, string]> = [
    ['Clicks', m.clicks.toLocaleString()],
    ['Unique clicks', m.unique_clicks.toLocaleString()],
    ['Leads', m.leads.toLocaleString()],
    ['Sales', m.sales.toLocaleString()],
    ['Revenue', amountsText(m.revenue, money)],
    ['Refunded', amountsText(m.refunded, money)],
    ['Click → lead', percent(conversion.click_to_lead)],
    ['Lead → sale', percent(conversion.lead_to_sale)],
  ];
  if (bots) items.push(['Bot clicks', m.bot_clicks.toLocaleString()]);
  return (
    <dl class="stat-totals">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Breakdown({ report, bots }: { report: StatsReport; bots: boolean }) {
  const b = report.breakdown;
  if (!b) return null;
  if (b.rows.length === 0) return <p>Nothing to break down in this range.</p>;
  const max = Math.max(1, ...b.rows.map((r) => r.clicks));
  const label = GROUP_LABELS[b.group_by];
  return (
    <DataTable
      label={`Breakdown by ${label.toLowerCase()}`}
      columns={[label, numeric('Clicks'), numeric('Unique'), numeric('Leads'), numeric('Sales'), numeric('Revenue'), bots && numeric('Bot clicks')]}
      class="breakdown"
    >
      {b.rows.map((r) => (
        <tr key={r.key}>
          <th scope="row">
            <span class="bar-label">{r.label}</span>
            <span class="bar" style={{ width: `${(r.clicks / max) * 100}%` }} aria-hidden="true" />
          </th>
          <td class="num">{r.clicks.toLocaleString()}</td>
          <td class="num">{r.unique_clicks.toLocaleString()}</td>
          <td class="num">{r.leads.toLocaleString()}</td>
          <td class="num">{r.sales.toLocaleString()}</td>
          <td class="num">{amountsText(r.revenue, money)}</td>
          {bots ? <td class="num">{r.bot_clicks.toLocaleString()}</td> : null}
        </tr>
      ))}
    </DataTable>
  );
}

export function StatsPanel({ programId, initial, timeZone }: { programId: number; initial: { from: string; to: string; today: string }; timeZone: string }) {
  const [choice, setChoice] = useState<StatsChoice>({ from: initial.from, to: initial.to, interval: 'day', groupBy: 'partner' });
  const [draft, setDraft] = useState<StatsChoice>(choice);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [bots, setBots] = useState(false);
  // The listing's dates move the panel too (the Events filters above the table).
  useEffect(() => {
    setChoice((c) => ({ ...c, from: initial.from, to: initial.to }));
    setDraft((d) => ({ ...d, from: initial.from, to: initial.to }));
  }, [initial.from, initial.to]);
  const query = statsQuery(choice, timeZone);
  const stats = useLoad(() => api.stats(programId, query), [programId, query]);

  function apply(e: Event) {
    e.preventDefault();
    const checked = checkDateRange(draft.from, draft.to);
    if (!checked.ok) return setInvalid(checked.message);
    setInvalid(null);
    setChoice(draft);
  }
  function preset(days: number) {
    const range = presetRange(days, initial.today);
    const next = { ...draft, ...range, interval: (days > 92 ? 'month' : 'day') as StatsInterval };
    setDraft(next);
    setInvalid(null);
    setChoice(next);
  }
  const report = stats.data;
  const per = INTERVAL_LABELS[choice.interval].toLowerCase();

  return (
    <section class="panel" aria-labelledby="chart-title">
      <h2 id="chart-title">Activity</h2>
      <div class="presets" role="group" aria-label="Date range presets">
        {RANGE_PRESETS.map((p) => (
          <button type="button" class="secondary" key={p.id} onClick={() => preset(p.days)}>
            {p.label}
          </button>
        ))}
      </div>
      <form class="filters" onSubmit={apply} noValidate aria-label="Stats range">
        <div class="field">
          <label for="s-from">Stats from</label>
          <input id="s-from" type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} aria-invalid={Boolean(invalid)} />
        </div>
        <div class="field">
          <label for="s-to">Stats to</label>
          <input id="s-to" type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} aria-invalid={Boolean(invalid)} />
        </div>
        <div class="field">
          <label for="s-interval">Per</label>
          <select id="s-interval" value={draft.interval} onChange={(e) => setDraft({ ...draft, interval: e.currentTarget.value as StatsInterval })}>
            {STATS_INTERVALS.map((i) => (
              <option value={i} key={i}>
                {INTERVAL_LABELS[i]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="s-group">Break down by</label>
          <select id="s-group" value={draft.groupBy} onChange={(e) => setDraft({ ...draft, groupBy: e.currentTarget.value as StatsGroupBy })}>
            {STATS_GROUP_BY.map((g) => (
              <option value={g} key={g}>
                {GROUP_LABELS[g]}
              </option>
            ))}
          </select>
        </div>
        <div class="filter-actions">
          <button type="submit">Show</button>
        </div>
      </form>
      <p class="muted small">
        Days and months in your time zone ({timeZone}), both dates included. Clicks from known bots, crawlers and link previews are not counted;{' '}
        <label class="inline">
          <input type="checkbox" checked={bots} onChange={(e) => setBots(e.currentTarget.checked)} /> show bot clicks
        </label>
      </p>
      {invalid ? (
        <p class="notice error" role="alert">
          {invalid}
        </p>
      ) : null}
      {stats.loading && !report ? <Loading what="the stats" /> : null}
      {stats.error && !isForbidden(stats.error) ? <ErrorNotice error={stats.error} /> : null}
      {report ? (
        <>
          <Totals m={report.totals} conversion={report.conversion} bots={bots} />
          <EventsChart data={chartSeries(report)} title={`Clicks, leads and sales per ${per} (${timeZone}), ${choice.from} to ${choice.to}`} period={INTERVAL_LABELS[choice.interval]} />
          <h3>By {GROUP_LABELS[choice.groupBy].toLowerCase()}</h3>
          <Breakdown report={report} bots={bots} />
          <div class="stats-actions">
            <button type="button" class="secondary" onClick={() => download(`stats-${programId}-${choice.from}-${choice.to}-series.csv`, seriesCsv(report))}>
              Download the series (CSV)
            </button>
            <button type="button" class="secondary" onClick={() => download(`stats-${programId}-${choice.from}-${choice.to}-by-${choice.groupBy}.csv`, breakdownCsv(report))}>
              Download the breakdown (CSV)
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
