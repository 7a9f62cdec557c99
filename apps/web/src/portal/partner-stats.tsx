/**
 * The partner's own stats in the portal (docs/partners.md "Your stats"), from
 * GET /api/portal/partners/:id/stats: a range preset, the totals (revenue per currency, never
 * summed across currencies), the daily series as bars and the breakdown by the partner's links —
 * the dashboard stats panel's pieces (components/stats-panel.tsx), with the partner's filter fixed
 * by the server. Days are the partner's own (the browser's time zone).
 */
import { useState } from 'preact/hooks';
import type { PortalOverview } from '@reftrack/contract';
import { useLoad } from '../lib/use-load.js';
import { browserTimeZone, presetRange, statsQuery, todayIn, type StatsChoice } from '../lib/stats-view.js';
import { Breakdown, chartSeries, Totals } from '../components/stats-panel.js';
import { EventsChart } from '../components/chart.js';
import { ErrorNotice, Loading } from '../components/ui.js';
import { portalApi } from './portal-api.js';

/** The portal's ranges: a daily series reads well up to a quarter. */
const PORTAL_PRESETS = [
  { id: '7d', label: 'Last 7 days', days: 7 },
  { id: '30d', label: 'Last 30 days', days: 30 },
  { id: '90d', label: 'Last 90 days', days: 90 },
] as const;

export function PartnerStats({ d, partnerId }: { d: PortalOverview; partnerId: number }) {
  const [timeZone] = useState(browserTimeZone);
  const [days, setDays] = useState<number>(30);
  const [programId, setProgramId] = useState<number | null>(d.terms[0]?.program_id ?? null);
  const today = todayIn(timeZone);
  const choice: StatsChoice = { ...presetRange(days, today), interval: 'day', groupBy: 'link' };
  const query = `${statsQuery(choice, timeZone)}${programId === null ? '' : `&program_id=${programId}`}`;
  const stats = useLoad(() => portalApi.stats(partnerId, query), [partnerId, query]);
  const report = stats.data;

  return (
    <section class="panel" aria-labelledby="stats-title">
      <h2 id="stats-title">Your stats</h2>
      <div class="presets" role="group" aria-label="Stats range">
        {PORTAL_PRESETS.map((p) => (
          <button type="button" class={p.days === days ? '' : 'secondary'} aria-pressed={p.days === days} key={p.id} onClick={() => setDays(p.days)}>
            {p.label}
          </button>
        ))}
      </div>
      {d.terms.length > 1 ? (
        <div class="field">
          <label for="stats-program">Program</label>
          <select id="stats-program" value={String(programId)} onChange={(e) => setProgramId(Number(e.currentTarget.value))}>
            {d.terms.map((t) => (
              <option value={t.program_id} key={t.program_id}>
                {t.program_name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <p class="muted small">
        {choice.from} to {choice.to}, days in your time zone ({timeZone}). Clicks from known bots, crawlers and link previews are not counted.
      </p>
      {stats.loading && !report ? <Loading what="your stats" /> : null}
      {stats.error ? <ErrorNotice error={stats.error} /> : null}
      {report ? (
        <>
          <Totals m={report.totals} conversion={report.conversion} bots={false} />
          <EventsChart data={chartSeries(report)} title={`Your clicks, leads and sales per day (${timeZone}), ${choice.from} to ${choice.to}`} period="Day" />
          <h3>By link</h3>
          <Breakdown report={report} bots={false} />
        </>
      ) : null}
    </section>
  );
}
