/** Readiness: the integration checklist with the next step of each open item, and the code to paste. */
import { BRAND, trackerSnippet } from '@reftrack/contract';
import type { DashboardProgram } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { formatDateTime } from '../lib/format.js';
import { AccessMissing, CodeBlock, ErrorNotice, isForbidden, Loading } from '../components/ui.js';

/** The one tracker tag (the contract's, shared with `reftrack init` and docs/tracker.md). */
export { trackerSnippet };

export function sdkLines(origin: string): string {
  return [
    `// npm install @${BRAND.token}/sdk`,
    `import { Reftrack } from '@${BRAND.token}/sdk';`,
    '',
    `const ${BRAND.token} = new Reftrack({ apiKey: process.env.REFTRACK_API_KEY, baseUrl: '${origin}' });`,
    '',
    '// When a referred visitor signs up (clickId from the reftrack_click_id cookie):',
    `await ${BRAND.token}.trackLead({ clickId, customerExternalId: user.id, email: user.email });`,
    '',
    '// When they pay (invoiceId is the idempotency key):',
    `await ${BRAND.token}.trackSale({ invoiceId: invoice.id, amount: 4900, currency: 'usd', customerExternalId: user.id });`,
  ].join('\n');
}

export function ReadinessTab({ program }: { program: DashboardProgram }) {
  const readiness = useLoad(() => api.readiness(program.id), [program.id]);
  if (isForbidden(readiness.error)) return <AccessMissing error={readiness.error} what="this program's readiness" />;
  const r = readiness.data;
  const origin = location.origin;
  const open = r ? r.checklist.filter((i) => !i.done).length : 0;

  return (
    <>
      <section class="panel" aria-labelledby="readiness-title">
        <div class="panel-head">
          <h2 id="readiness-title">Integration checklist</h2>
          <button type="button" class="secondary small" onClick={readiness.reload} disabled={readiness.loading}>
            {readiness.loading ? 'Checking…' : 'Check again'}
          </button>
        </div>
        {readiness.loading && !r ? <Loading what="the checklist" /> : null}
        <ErrorNotice error={readiness.error} />
        {r ? (
          <>
            <p class={`notice ${r.ready ? 'success' : 'info'}`}>
              {r.ready ? 'Ready: clicks, leads and sales arrive and the key is in good standing.' : `Not ready yet: ${open} of ${r.checklist.length} items open.`}
              {r.rotate_by ? ` The key must be rotated by ${formatDateTime(r.rotate_by)}.` : ''}
            </p>
            <ol class="checklist">
              {r.checklist.map((item) => (
                <li key={item.key} class={item.done ? 'done' : 'open'}>
                  <span class="mark" aria-hidden="true">
                    {item.done ? '✓' : '○'}
                  </span>
                  <div>
                    <strong>{item.label}</strong> <span class="visually-hidden">{item.done ? '(done)' : '(to do)'}</span>
                    {item.next_step ? (
                      <p class="next">
                        <span class="next-label">Next step:</span> {item.next_step}
                      </p>
                    ) : null}
                  </div>
                </li>
              ))}
            </ol>
          </>
        ) : null}
      </section>
      <section class="panel" aria-labelledby="snippet-title">
        <h2 id="snippet-title">Tracker snippet</h2>
        <p class="muted">
          Put this tag on every page of <strong>{program.domain}</strong>. It stores the click id of a referral visit (<code>?aff=…</code>) in a first-party cookie.
        </p>
        <CodeBlock code={trackerSnippet(origin, program.id)} what="tracker snippet" />
      </section>
      <section class="panel" aria-labelledby="sdk-title">
        <h2 id="sdk-title">Server SDK</h2>
        <p class="muted">
          Report leads and sales from your server with the program key (<a href={`/programs/${program.id}/settings`}>Settings &amp; key</a>).
        </p>
        <CodeBlock code={sdkLines(origin)} what="SDK lines" />
      </section>
    </>
  );
}
