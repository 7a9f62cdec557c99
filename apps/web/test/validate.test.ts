import { describe, expect, it } from 'vitest';
import { ERRORS, formatMessage } from '@reftrack/contract';
import { checkDateRange, checkLink, checkPartner, checkPayments, checkProgram, hostOf, type ProgramForm } from '../src/lib/validate.js';

const good: ProgramForm = { name: 'Acme', domain: 'acme.com', commission_type: 'percent', commission_rate: '20', attribution_window_days: '60', lead_auth: 'server_required' };
const fail = (r: { ok: boolean }) => (r.ok ? null : (r as unknown as { ok: false; field: string; message: string }));

describe('program form', () => {
  it('accepts a valid program and normalises the domain and numbers', () => {
    const r = checkProgram({ ...good, domain: 'https://Shop.Acme.com/pricing?x=1' });
    expect(r).toEqual({ ok: true, value: { name: 'Acme', domain: 'shop.acme.com', commission_type: 'percent', commission_rate: 20, attribution_window_days: 60, lead_auth: 'server_required' } });
  });

  it('answers with the contract messages, in the server order', () => {
    expect(fail(checkProgram({ ...good, name: ' ' }))).toEqual({ ok: false, field: 'name', message: ERRORS.cliInitMissingFields.message });
    expect(fail(checkProgram({ ...good, commission_rate: '' }))?.message).toBe(ERRORS.cliInitMissingFields.message);
    expect(fail(checkProgram({ ...good, commission_type: 'weekly' }))?.message).toBe(formatMessage(ERRORS.cliInitCommissionType.message, { value: 'weekly' }));
    expect(fail(checkProgram({ ...good, commission_rate: '-1' }))?.message).toBe(ERRORS.cliInitCommissionRate.message);
    expect(fail(checkProgram({ ...good, commission_rate: 'abc' }))?.message).toBe(ERRORS.cliInitCommissionRate.message);
    expect(fail(checkProgram({ ...good, domain: 'not a host' }))?.message).toBe(ERRORS.programDomainInvalid.message);
    expect(fail(checkProgram({ ...good, attribution_window_days: '366' }))?.message).toBe(ERRORS.attributionWindowInvalid.message);
    expect(fail(checkProgram({ ...good, attribution_window_days: '1.5' }))?.message).toBe(ERRORS.attributionWindowInvalid.message);
    expect(fail(checkProgram({ ...good, lead_auth: 'anyone' }))?.message).toBe(ERRORS.leadAuthInvalid.message);
  });

  it('leaves optional fields out when empty', () => {
    const r = checkProgram({ ...good, attribution_window_days: '', lead_auth: '' });
    expect(r.ok && r.value).toEqual({ name: 'Acme', domain: 'acme.com', commission_type: 'percent', commission_rate: 20 });
  });

  it('keeps only the host of a pasted URL', () => {
    expect(hostOf(' HTTP://www.Example.com:8080/a ')).toBe('www.example.com');
  });
});

describe('partner, link, payments and date checks', () => {
  it('partners', () => {
    expect(fail(checkPartner({ name: '', code: 'x', email: '' }))?.message).toBe(ERRORS.partnerFieldsMissing.message);
    expect(fail(checkPartner({ name: 'P', code: 'a b', email: '' }))?.message).toBe(ERRORS.partnerCodeInvalid.message);
    expect(fail(checkPartner({ name: 'P', code: 'ab', email: 'nope' }))?.message).toBe(ERRORS.partnerEmailInvalid.message);
    expect(checkPartner({ name: ' P ', code: 'ab', email: '' })).toEqual({ ok: true, value: { name: 'P', code: 'ab' } });
  });

  it('links', () => {
    expect(fail(checkLink({ short_link: '', partner_id: '1' }))?.message).toBe(ERRORS.linkFieldsMissing.message);
    expect(fail(checkLink({ short_link: 'a/b', partner_id: '1' }))?.message).toBe(ERRORS.shortLinkInvalid.message);
    expect(checkLink({ short_link: 'pat20', partner_id: '3' })).toEqual({ ok: true, value: { short_link: 'pat20', partner_id: 3 } });
  });

  it('payments', () => {
    expect(fail(checkPayments({ stripe_account_id: 'acc_1', webhook_secret: 'whsec_1' }))?.message).toBe(ERRORS.stripeAccountInvalid.message);
    expect(fail(checkPayments({ stripe_account_id: 'acct_1', webhook_secret: 'sec' }))?.message).toBe(ERRORS.webhookSecretInvalid.message);
    expect(checkPayments({ stripe_account_id: ' acct_1 ', webhook_secret: 'whsec_x' }).ok).toBe(true);
  });

  it('dates', () => {
    expect(checkDateRange('', '').ok).toBe(true);
    expect(fail(checkDateRange('2026-02-02', '2026-02-01'))?.message).toBe(ERRORS.eventsDateRange.message);
    expect(fail(checkDateRange('02/01/2026', ''))?.message).toBe(ERRORS.eventsDateFromInvalid.message);
    expect(fail(checkDateRange('', 'x'))?.message).toBe(ERRORS.eventsDateToInvalid.message);
  });
});
