/** One referral link's QR code and daily chart in the portal, loaded when the partner opens it. */
import { useState } from 'preact/hooks';
import type { PortalLink, PortalLinkDaily } from '@reftrack/contract';
import { EventsChart } from '../components/chart.js';
import { QrCode } from '../components/qr-code.js';
import { ErrorNotice, Loading } from '../components/ui.js';
import type { DailySeries } from '../lib/chart-data.js';
import { portalApi } from './portal-api.js';

/** The server's per-day counts in the dashboard chart's shape (exact counts: nothing is "at least"). */
export function toSeries(d: PortalLinkDaily): DailySeries {
  const none = d.days.map(() => false);
  return { days: d.days, counts: { click: d.clicks, lead: d.leads, conversion: d.sales }, atLeast: { click: none, lead: none, conversion: none }, partial: false, requests: 1 };
}

export function LinkDetails({ partnerId, link }: { partnerId: number; link: PortalLink }) {
  const [open, setOpen] = useState(false);
  const [daily, setDaily] = useState<PortalLinkDaily | null>(null);
  const [error, setError] = useState<unknown>(null);
  function toggle(e: Event) {
    const isOpen = (e.currentTarget as HTMLDetailsElement).open;
    setOpen(isOpen);
    if (isOpen && !daily) portalApi.linkDaily(partnerId, link.id).then(setDaily, setError);
  }
  return (
    <details class="link-details" onToggle={toggle}>
      <summary>QR code and daily chart of {link.short_link}</summary>
      {open ? (
        <div class="link-details-body">
          {link.url.startsWith('http') ? <QrCode text={link.url} label={`QR code of the link ${link.url}`} fileName={`${link.short_link}-qr.svg`} /> : <p class="muted">No QR code: the program has no site address yet.</p>}
          <div>
            {daily ? <EventsChart data={toSeries(daily)} title={`${link.short_link}: last ${daily.days.length} days (UTC)`} tableLabel={`${link.short_link}: clicks, leads and sales per day`} /> : error ? null : <Loading what="the daily chart" />}
            <ErrorNotice error={error} />
          </div>
        </div>
      ) : null}
    </details>
  );
}
