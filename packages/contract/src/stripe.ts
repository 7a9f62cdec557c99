/**
 * The Stripe events the connected-account intake (POST /api/v1/webhooks/stripe, spec 6.1) needs.
 * The dashboard's Payments page and docs/stripe.md list exactly these (a test holds the docs to
 * them), so an advertiser never subscribes to a partial set.
 */
export interface StripeIntakeEvent {
  type: string;
  why: string;
}

export const STRIPE_INTAKE_EVENTS: readonly StripeIntakeEvent[] = [
  { type: 'checkout.session.completed', why: 'one-off payments' },
  { type: 'checkout.session.async_payment_succeeded', why: 'one-off payments with delayed methods (bank debits)' },
  { type: 'invoice.payment_succeeded', why: 'first subscription payment and every renewal' },
  { type: 'invoice_payment.paid', why: 'API 2025-03-31 and later: which payment paid which invoice, so refunds of subscription payments find their sale' },
  { type: 'charge.refunded', why: 'refunds (full or partial)' },
  { type: 'charge.dispute.created', why: 'chargebacks' },
];

