/** Clicks, leads and sales per day as inline SVG bars, with the same numbers as a table. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventType } from '@reftrack/contract';
import { niceScale, CHART_TYPES, type DailySeries } from '../lib/chart-data.js';
import { DataTable, numeric } from './data-table.js';

export const SERIES: Record<EventType, { label: string; one: string; many: string; color: string }> = {
  click: { label: 'Clicks', one: 'click', many: 'clicks', color: '#2563eb' },
  lead: { label: 'Leads', one: 'lead', many: 'leads', color: '#b45309' },
  conversion: { label: 'Sales', one: 'sale', many: 'sales', color: '#047857' },
};
const count = (n: number, t: EventType) => `${n} ${n === 1 ? SERIES[t].one : SERIES[t].many}`;

const H = 220;

/** Width of an element in CSS pixels, kept current: the chart is drawn at its real size so text stays legible. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(260, Math.floor(el.clientWidth)));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}
const PAD = { top: 12, right: 8, bottom: 28, left: 36 };

/** `period`: what one bar group is (the table's first column), a day in UTC unless told; `tableLabel` names the table's region. */
export function EventsChart({ data, title, period = 'Day (UTC)', tableLabel }: { data: DailySeries; title: string; period?: string; tableLabel?: string }) {
  const [box, W] = useWidth(720);
  const n = data.days.length;
  const max = Math.max(0, ...CHART_TYPES.flatMap((t) => data.counts[t]));
  const scale = niceScale(max);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, n);
  const barW = Math.max(1, (slot * 0.8) / CHART_TYPES.length);
  const y = (v: number) => PAD.top + plotH - (v / scale.max) * plotH;
  const labelEvery = Math.max(1, Math.ceil(n / Math.max(2, Math.floor(plotW / 56))));
  const totals = Object.fromEntries(CHART_TYPES.map((t) => [t, data.counts[t].reduce((a, b) => a + b, 0)])) as Record<EventType, number>;
  const summary = `${title}: ${CHART_TYPES.map((t) => count(totals[t], t)).join(', ')}.`;
  const ticks = Array.from({ length: Math.round(scale.max / scale.step) + 1 }, (_, i) => i * scale.step);

  return (
    <figure class="chart">
      <figcaption>
        <span class="chart-title">{title}</span>
        <ul class="legend" aria-hidden="true">
          {CHART_TYPES.map((t) => (
            <li key={t}>
              <span class="swatch" style={{ background: SERIES[t].color }} />
              {SERIES[t].label} <strong>{totals[t]}</strong>
            </li>
          ))}
        </ul>
      </figcaption>
      <div ref={box} class="chart-box">
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={summary} class="chart-svg">
        {ticks.map((v) => (
          <g key={v}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} class="grid" />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end" class="axis">
              {v}
            </text>
          </g>
        ))}
        {data.days.map((day, i) => (
          <g key={day}>
            {CHART_TYPES.map((t, k) => {
              const v = data.counts[t][i];
              const x = PAD.left + i * slot + slot * 0.1 + k * barW;
              return v > 0 ? (
                <rect key={t} x={x} y={y(v)} width={barW} height={PAD.top + plotH - y(v)} fill={SERIES[t].color}>
                  <title>{`${day}: ${data.atLeast[t][i] ? 'at least ' : ''}${count(v, t)}`}</title>
                </rect>
              ) : null;
            })}
            {i % labelEvery === 0 ? (
              <text x={PAD.left + i * slot + slot / 2} y={H - 8} text-anchor="middle" class="axis">
                {day.slice(5)}
              </text>
            ) : null}
          </g>
        ))}
      </svg>
      </div>
      <details class="chart-table">
        <summary>Show the numbers as a table</summary>
        <DataTable
          label={tableLabel ?? `Events per ${period.split(' ')[0].toLowerCase()}`}
          columns={[period, ...CHART_TYPES.map((t) => numeric(SERIES[t].label))]}
        >
          {data.days.map((day, i) => (
            <tr key={day}>
              <th scope="row">{day}</th>
              {CHART_TYPES.map((t) => (
                <td class="num" key={t}>
                  {data.atLeast[t][i] ? '≥ ' : ''}
                  {data.counts[t][i]}
                </td>
              ))}
            </tr>
          ))}
        </DataTable>
      </details>
    </figure>
  );
}
