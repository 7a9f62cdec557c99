import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STRIPE_INTAKE_EVENTS } from '../src/index.js';

const stripeDoc = readFileSync(new URL('../../../docs/stripe.md', import.meta.url), 'utf8');

describe('6.1 the events a Stripe endpoint subscribes to', () => {
  it('are the six the intake acts on', () => {
    expect(STRIPE_INTAKE_EVENTS.map((e) => e.type)).toEqual([
      'checkout.session.completed',
      'checkout.session.async_payment_succeeded',
      'invoice.payment_succeeded',
      'invoice_payment.paid',
      'charge.refunded',
      'charge.dispute.created',
    ]);
  });

  it('docs/stripe.md lists the same events, with the same reasons, in its subscription table', () => {
    const path1 = stripeDoc.slice(stripeDoc.indexOf('## Path 1'), stripeDoc.indexOf('### What each event does'));
    const rows = [...path1.matchAll(/^\s*\| `([a-z_.]+)` \| (.+) \|$/gm)].map((m) => ({ type: m[1], why: m[2] }));
    expect(rows).toEqual(STRIPE_INTAKE_EVENTS.map((e) => ({ type: e.type, why: e.why })));
    expect(path1).toContain('`invoice.paid`');
  });
});
