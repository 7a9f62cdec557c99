/** What to paste where after `reftrack init`: the tracker tag, the key, and the SDK calls. */
import { BRAND } from '@reftrack/contract';

/** The one tracker tag (the contract's, shared with the dashboard and docs/tracker.md). */
export { trackerSnippet } from '@reftrack/contract';

export function sdkSnippet(baseUrl: string): string {
  return [
    `import { Reftrack } from '@reftrack/sdk';`,
    ``,
    `// Server side only. The SDK also reads REFTRACK_BASE_URL (here: ${baseUrl}).`,
    `const apiKey = process.env.REFTRACK_API_KEY;`,
    `const reftrack = new Reftrack({ apiKey });`,
    ``,
    `// At signup. clickId: the tracker's getClickId() (cookie ${BRAND.cookieName}), sent by your frontend;`,
    `// customerExternalId: your user's id, the same at signup and at payment.`,
    `await reftrack.trackLead({ clickId, customerExternalId });`,
    ``,
    `// At payment. amount in cents; invoiceId is the idempotency key (a resend is recognised).`,
    `await reftrack.trackSale({ customerExternalId, amount, invoiceId });`,
  ].join('\n');
}

export function verifyCommand(baseUrl: string): string {
  return `REFTRACK_API_KEY=<program key> ${BRAND.cli} test-event chain --base-url ${baseUrl}`;
}
