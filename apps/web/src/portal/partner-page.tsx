/** One partner record in the portal: terms, the partner's stats, links with copy buttons and results, commissions, payouts, payout details. */
import { useEffect } from 'preact/hooks';
import { BRAND, type PortalMe, type PortalOverview } from '@reftrack/contract';
import { useLoad } from '../lib/use-load.js';
import { describeCommission, formatDateTime, formatMoney } from '../lib/format.js';
import { CopyButton, ErrorNotice, Loading } from '../components/ui.js';
import { portalApi } from './portal-api.js';
import { LinkDetails } from './link-details.js';
import { LinkRequests } from './link-requests.js';
import { PayoutDetails } from './payout-details.js';
import { PartnerStats } from './partner-stats.js';
import { DataTable, numeric } from '../components/data-table.js';

const STATUS_LABELS: Record<string, string> = { pending: 'Pending (in hold)', approved: 'Approved', paid: 'Paid', reversed: 'Reversed', declined: 'Declined' };

export function PortalPartnerPage({ me, partnerId }: { me: PortalMe; partnerId: number }) {
  const overview = useLoad(() => portalApi.overview(partnerId), [partnerId]);
  const record = me.partners.find((p) => p.partner_id === partnerId);
  useEffect(() => {
    document.title = `${record?.partner_name ?? 'Partner'} — Partner portal — ${BRAND.name}`;
  }, [partnerId]);
  if (overview.loading && !overview.data) return <Loading what="your partner record" />;
  if (!overview.data)
    return (
      <section>
        <h1>Partner record not found</h1>
        <ErrorNotice error={overview.error} />
        <p>
          <a href="/portal">Your partner programs</a>
        </p>
      </section>
    );
  const d = overview.data;
  return (
    <section>
      <h1>
        {d.partner.name} <span class="sub">{record?.workspace_name}</span>
      </h1>
      <Terms d={d} />
      <PartnerStats d={d} partnerId={partnerId} />
      <Links d={d} partnerId={partnerId} />
      <LinkRequests partnerId={partnerId} d={d} />
      <Commissions d={d} />
      <Payouts d={d} />
      <PayoutDetails partnerId={partnerId} />
    </section>
  );
}

function Terms({ d }: { d: PortalOverview }) {
  return (
    <section class="panel" aria-labelledby="terms-title">
      <h2 id="terms-title">Program terms</h2>
      <DataTable label="Program terms table" columns={['Program', 'Commission', numeric('Cookie window'), numeric('Hold period'), numeric('Payout minimum')]}>
        {d.terms.map((t) => (
          <tr key={t.program_id}>
            <th scope="row">{t.program_name}</th>
            <td>{describeCommission(t.commission_type, t.commission_rate)}</td>
            <td class="num">{t.cookie_window_days} days</td>
            <td class="num">{t.hold_days} days</td>
            <td class="num">{t.payout_minimum > 0 ? `${t.payout_minimum} (major units)` : 'none'}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

function Links({ d, partnerId }: { d: PortalOverview; partnerId: number }) {
  const names = new Map(d.terms.map((t) => [t.program_id, t.program_name]));
  return (
    <section class="panel" aria-labelledby="links-title">
      <h2 id="links-title">Your referral links</h2>
      {d.links.length === 0 ? (
        <p>No referral links yet. The program's owner creates them.</p>
      ) : (
        <DataTable label="Referral links table" columns={['Link', 'Program', numeric('Clicks'), numeric('Leads'), numeric('Sales')]}>
          {d.links.map((l) => (
            <tr key={l.id}>
              <th scope="row">
                <code class="link-url">{l.url}</code> {l.active ? <CopyButton text={l.url} what={`link ${l.short_link}`} /> : <span class="sub">switched off</span>}
              </th>
              <td>{names.get(l.program_id) ?? '—'}</td>
              <td class="num">{l.clicks}</td>
              <td class="num">{l.leads}</td>
              <td class="num">{l.sales}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {d.links.map((l) => (
        <LinkDetails key={l.id} partnerId={partnerId} link={l} />
      ))}
    </section>
  );
}

function Commissions({ d }: { d: PortalOverview }) {
  return (
    <section class="panel" aria-labelledby="commissions-title">
      <h2 id="commissions-title">Commissions</h2>
      {d.commissions.length === 0 ? (
        <p>No commissions yet.</p>
      ) : (
        <DataTable label="Commissions by status and currency" columns={['Status', numeric('Commissions'), numeric('Amount')]}>
          {d.commissions.map((c) => (
            <tr key={`${c.status}-${c.currency}`}>
              <th scope="row">{STATUS_LABELS[c.status] ?? c.status}</th>
              <td class="num">{c.count}</td>
              <td class="num">{formatMoney(c.amount_cents, c.currency)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function Payouts({ d }: { d: PortalOverview }) {
  return (
    <section class="panel" aria-labelledby="payouts-title">
      <h2 id="payouts-title">Payouts</h2>
      {d.payouts.length === 0 ? (
        <p>No payouts yet.</p>
      ) : (
        <DataTable label="Payouts table" columns={['Reference', 'Date', 'Method', 'Status', numeric('Amount'), 'Line in the payout file']}>
          {d.payouts.map((p) => (
            <tr key={p.id}>
              <th scope="row">{p.reference}</th>
              <td>{formatDateTime(p.created_at)}</td>
              <td>{p.method}</td>
              <td>{p.status}</td>
              <td class="num">{formatMoney(p.amount_cents, p.currency)}</td>
              <td>{p.csv_line ? <code class="csv-line">{p.csv_line}</code> : <span class="sub">{p.method === 'manual' ? 'paid by hand' : 'no matching payout details'}</span>}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
