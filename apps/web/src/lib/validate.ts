/**
 * Checks made in the browser before a form is sent, so a person sees the problem at once. The rules
 * mirror the server's and the messages are the contract's (the server answers the same ones, and
 * its `error.message` is shown whenever it refuses something these checks let through).
 */
import { COMMISSION_TYPES, ERRORS, LEAD_AUTH_MODES, formatMessage, type CommissionType, type LeadAuth } from '@reftrack/contract';

/** Form values as typed: strings straight from the inputs. */
export interface ProgramForm {
  name: string;
  domain: string;
  commission_type: string;
  commission_rate: string;
  attribution_window_days: string;
  lead_auth: string;
}

export interface ProgramFields {
  name: string;
  domain: string;
  commission_type: CommissionType;
  commission_rate: number;
  attribution_window_days?: number;
  lead_auth?: LeadAuth;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

const HOST = /^(?=.{1,253}$)(localhost|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$/;
const CODE = /^[A-Za-z0-9_-]{1,100}$/;
const EMAIL = /^[^@\s]{1,200}@[^@\s]{1,200}$/;

/** The host part of what people paste: `https://shop.example.com/pricing` → `shop.example.com`. */
export function hostOf(domain: string): string {
  return domain.trim().toLowerCase().replace(/^https?:\/\//, '').replace(/[/?#].*$/, '').replace(/:\d+$/, '');
}

const bad = (field: string, message: string): Checked<never> => ({ ok: false, field, message });

export function checkProgram(form: ProgramForm): Checked<ProgramFields> {
  const required = ['name', 'domain', 'commission_type', 'commission_rate'] as const;
  const empty = required.find((k) => form[k].trim() === '');
  if (empty) return bad(empty, ERRORS.cliInitMissingFields.message);
  if (!(COMMISSION_TYPES as readonly string[]).includes(form.commission_type)) {
    return bad('commission_type', formatMessage(ERRORS.cliInitCommissionType.message, { value: form.commission_type }));
  }
  const rate = Number(form.commission_rate);
  if (!Number.isFinite(rate) || rate <= 0) return bad('commission_rate', ERRORS.cliInitCommissionRate.message);
  const name = form.name.trim();
  if (name.length > 200) return bad('name', ERRORS.programNameInvalid.message);
  const domain = hostOf(form.domain);
  if (!HOST.test(domain)) return bad('domain', ERRORS.programDomainInvalid.message);
  const value: ProgramFields = { name, domain, commission_type: form.commission_type as CommissionType, commission_rate: rate };
  if (form.attribution_window_days.trim() !== '') {
    const days = Number(form.attribution_window_days);
    if (!Number.isInteger(days) || days < 1 || days > 365) return bad('attribution_window_days', ERRORS.attributionWindowInvalid.message);
    value.attribution_window_days = days;
  }
  if (form.lead_auth !== '') {
    if (!(LEAD_AUTH_MODES as readonly string[]).includes(form.lead_auth)) return bad('lead_auth', ERRORS.leadAuthInvalid.message);
    value.lead_auth = form.lead_auth as LeadAuth;
  }
  return { ok: true, value };
}

export function checkPartner(form: { name: string; code: string; email: string }): Checked<{ name: string; code: string; email?: string }> {
  const name = form.name.trim();
  const code = form.code.trim();
  const email = form.email.trim();
  if (!name) return bad('name', ERRORS.partnerFieldsMissing.message);
  if (!code) return bad('code', ERRORS.partnerFieldsMissing.message);
  if (!CODE.test(code)) return bad('code', ERRORS.partnerCodeInvalid.message);
  if (email && !EMAIL.test(email)) return bad('email', ERRORS.partnerEmailInvalid.message);
  return { ok: true, value: email ? { name, code, email } : { name, code } };
}

export function checkLink(form: { short_link: string; partner_id: string }): Checked<{ short_link: string; partner_id: number }> {
  const shortLink = form.short_link.trim();
  if (!shortLink) return bad('short_link', ERRORS.linkFieldsMissing.message);
  if (!form.partner_id) return bad('partner_id', ERRORS.linkFieldsMissing.message);
  if (!CODE.test(shortLink)) return bad('short_link', ERRORS.shortLinkInvalid.message);
  return { ok: true, value: { short_link: shortLink, partner_id: Number(form.partner_id) } };
}

export function checkPayments(form: { stripe_account_id: string; webhook_secret: string }): Checked<{ stripe_account_id: string; webhook_secret: string }> {
  const account = form.stripe_account_id.trim();
  const secret = form.webhook_secret.trim();
  if (!/^acct_[A-Za-z0-9]{1,100}$/.test(account)) return bad('stripe_account_id', ERRORS.stripeAccountInvalid.message);
  if (!/^whsec_[A-Za-z0-9+/=_-]{1,200}$/.test(secret)) return bad('webhook_secret', ERRORS.webhookSecretInvalid.message);
  return { ok: true, value: { stripe_account_id: account, webhook_secret: secret } };
}

/** The event filters' dates (`YYYY-MM-DD` from date inputs; empty = no bound). */
export function checkDateRange(from: string, to: string): Checked<{ from: string; to: string }> {
  if (from && !/^\d{4}-\d{2}-\d{2}$/.test(from)) return bad('dateFrom', ERRORS.eventsDateFromInvalid.message);
  if (to && !/^\d{4}-\d{2}-\d{2}$/.test(to)) return bad('dateTo', ERRORS.eventsDateToInvalid.message);
  if (from && to && from > to) return bad('dateFrom', ERRORS.eventsDateRange.message);
  return { ok: true, value: { from, to } };
}
