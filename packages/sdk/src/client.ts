/** The `Reftrack` client: one method per tracking call of spec part 4. */
import { ERROR_CODES, ERRORS, ROUTES } from '@reftrack/contract';
import type { ClickRequest, ClickResponse, LeadRequest, LeadResponse, ReadinessResponse, RefundRequest, RefundResponse, SaleRequest, SaleResponse, TestSaleData } from '@reftrack/contract';
import { APIError, AuthenticationError, ConflictError, InvalidRequestError } from './errors.js';
import { assertKnownKeys, assertPlainObject, resolveClientOptions, resolveRequestOptions, type ReftrackOptions, type RequestOptions } from './options.js';
import { RequestSender, type ApiResponse } from './request-sender.js';
import { matchTemplate } from './templates.js';
import type {
  ReadinessResult,
  ResultMeta,
  TestSaleResult,
  TrackClickParams,
  TrackClickResult,
  TrackLeadOptions,
  TrackLeadParams,
  TrackLeadResult,
  TrackRefundParams,
  TrackRefundResult,
  TrackSaleParams,
  TrackSaleResult,
} from './types.js';
import { warnOncePerProcess } from './warnings.js';
import { constructWebhookEvent, type WebhooksHelper } from './webhooks.js';

const LEAD_FIELDS = ['clickId', 'customerExternalId', 'email'] as const;
const SALE_FIELDS = [
  'invoiceId',
  'amount',
  'currency',
  'customerExternalId',
  'clickId',
  'isRecurring',
  'saleType',
  'subscriptionId',
  'occurredAt',
  'provider',
  'providerPaymentId',
  'livemode',
  'additionalData',
] as const;
const REFUND_FIELDS = ['invoiceId', 'reason', 'refundReason'] as const;
const CLICK_FIELDS = ['affiliateUrl', 'userAgent', 'referrerUrl', 'pageUrl', 'existingClickId'] as const;

/** The SDK's default currency (4.3). */
const DEFAULT_CURRENCY = 'usd';

function meta(response: ApiResponse<unknown>): ResultMeta {
  return { requestId: response.requestId, warnings: response.warnings };
}

function toIsoTime(value: Date | string): string {
  if (typeof value === 'string') return value;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new TypeError('trackSale: occurredAt must be a valid Date or an ISO 8601 string.');
  return value.toISOString();
}

export class Reftrack {
  /** Verifying outbound webhooks: `reftrack.webhooks.constructEvent(rawBody, headers, secret)` (docs/webhooks.md). */
  readonly webhooks: WebhooksHelper = { constructEvent: constructWebhookEvent };
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly #hasKey: boolean;
  // The key lives only in the sender's private state, so console.log(client) and JSON.stringify(client) never show it.
  readonly #sender: RequestSender;

  constructor(options: ReftrackOptions = {}) {
    const resolved = resolveClientOptions(options);
    this.baseUrl = resolved.baseUrl;
    this.timeoutMs = resolved.timeoutMs;
    this.maxRetries = resolved.maxRetries;
    this.#hasKey = resolved.apiKey !== null;
    this.#sender = new RequestSender({
      baseUrl: resolved.baseUrl,
      apiKey: resolved.apiKey,
      dispatcher: resolved.dispatcher,
      onWarning: resolved.onWarning ?? warnOncePerProcess,
    });
  }

  /** Server-mode lead (4.2): the signup is attributed by your server, authenticated by the program key. */
  async trackLead(params: TrackLeadParams, options?: TrackLeadOptions): Promise<TrackLeadResult> {
    assertPlainObject('trackLead params', params);
    assertKnownKeys('trackLead params', params, LEAD_FIELDS);
    const request = resolveRequestOptions('trackLead options', options, this, ['ignoreAlreadyLead']);
    const ignoreAlreadyLead = options?.ignoreAlreadyLead ?? false;
    if (typeof ignoreAlreadyLead !== 'boolean') throw new TypeError('trackLead options.ignoreAlreadyLead must be a boolean.');
    this.#requireKey('trackLead');
    const body: LeadRequest = { click_id: params.clickId, customer_key: params.customerExternalId, email: params.email };
    try {
      const response = await this.#sender.send<LeadResponse>({ method: 'POST', path: ROUTES.trackLead.path, body, authenticated: true, ...request });
      return { ...meta(response), alreadyLead: false, provisional: response.body.provisional === true, data: response.body.data };
    } catch (error) {
      if (error instanceof InvalidRequestError) {
        const already = matchTemplate(ERRORS.leadStatus.message, error.message);
        // "Already a lead" is safe to ignore (7.4). It is also what a retry answers after a first
        // attempt that was recorded but whose answer was lost, and then it is this call's own success.
        if (already && (ignoreAlreadyLead || error.attempts > 1)) {
          return { requestId: error.requestId, warnings: error.warnings, alreadyLead: true, status: already.status };
        }
      }
      throw error;
    }
  }

  /** Report a sale (4.3). A repeat with the same `invoiceId` is reported as `duplicate: true`, never counted twice. */
  async trackSale(params: TrackSaleParams, options?: RequestOptions): Promise<TrackSaleResult> {
    assertPlainObject('trackSale params', params);
    assertKnownKeys('trackSale params', params, SALE_FIELDS);
    const request = resolveRequestOptions('trackSale options', options, this);
    this.#requireKey('trackSale');
    const body: SaleRequest = {
      transaction_id: params.invoiceId,
      amount_cents: params.amount,
      customer_key: params.customerExternalId,
      click_id: params.clickId,
      currency: params.currency ?? DEFAULT_CURRENCY,
      is_recurring: params.isRecurring,
      sale_type: params.saleType,
      subscription_id: params.subscriptionId,
      occurred_at: params.occurredAt === undefined ? undefined : toIsoTime(params.occurredAt),
      provider: params.provider,
      provider_payment_id: params.providerPaymentId,
      livemode: params.livemode,
      additional_data: params.additionalData,
    };
    try {
      const response = await this.#sender.send<SaleResponse>({ method: 'POST', path: ROUTES.trackSale.path, body, authenticated: true, ...request });
      return { ...meta(response), duplicate: false, data: response.body.data };
    } catch (error) {
      if (error instanceof ConflictError && error.code === ERROR_CODES.duplicateTransaction) {
        const saleId = error.details.sale_id;
        // 4.3 rule 3: the 409 names the recorded sale. Without it the answer did not come from a
        // Reftrack server as documented (a proxy rewrote it?): say so instead of returning a hole.
        if (typeof saleId !== 'number' || !Number.isSafeInteger(saleId) || saleId < 1) {
          throw new APIError({
            status: error.status,
            code: error.code,
            message: `The server answered 409 ${ERROR_CODES.duplicateTransaction} without a sale id (error.details.sale_id should be a positive integer, got ${JSON.stringify(saleId) ?? 'nothing'}). The sale is recorded; check that baseUrl points at a Reftrack server.`,
            requestId: error.requestId,
            details: error.details,
            headers: error.headers,
            raw: error.raw,
            warnings: error.warnings,
            cause: error,
          });
        }
        return { requestId: error.requestId, warnings: error.warnings, duplicate: true, saleId, transactionId: params.invoiceId };
      }
      throw error;
    }
  }

  /** Report a refund or chargeback of a sale (4.4). */
  async trackRefund(params: TrackRefundParams, options?: RequestOptions): Promise<TrackRefundResult> {
    assertPlainObject('trackRefund params', params);
    assertKnownKeys('trackRefund params', params, REFUND_FIELDS);
    const request = resolveRequestOptions('trackRefund options', options, this);
    this.#requireKey('trackRefund');
    const body: RefundRequest = { transaction_id: params.invoiceId, reason: params.reason, refund_reason: params.refundReason };
    const response = await this.#sender.send<RefundResponse>({ method: 'POST', path: ROUTES.trackRefund.path, body, authenticated: true, ...request });
    return { ...meta(response), data: response.body.data };
  }

  /** The program's integration checklist (4.5). */
  async readiness(options?: RequestOptions): Promise<ReadinessResult> {
    const request = resolveRequestOptions('readiness options', options, this);
    this.#requireKey('readiness');
    const response = await this.#sender.send<ReadinessResponse>({ method: 'GET', path: ROUTES.readiness.path, authenticated: true, ...request });
    return { ...meta(response), data: response.body.data };
  }

  /**
   * A test sale (4.3 rule 1): checks the key end to end. It stores a sale flagged as test and may
   * advance the checklist; it creates no commission.
   */
  async sendTestSale(options?: RequestOptions): Promise<TestSaleResult> {
    const request = resolveRequestOptions('sendTestSale options', options, this);
    this.#requireKey('sendTestSale');
    const body: SaleRequest = { additional_data: { test_mode: true } };
    const response = await this.#sender.send<{ data: TestSaleData }>({ method: 'POST', path: ROUTES.trackSale.path, body, authenticated: true, ...request });
    return { ...meta(response), data: response.body.data };
  }

  /**
   * A click on a referral link (4.1). Public: the key is not sent. Most servers use
   * `handleReferral` instead, which also builds the cookie. Not retried unless `maxRetries` is
   * passed: a click has no idempotency key, so a repeat after a lost answer records it twice.
   */
  async trackClick(params: TrackClickParams, options?: RequestOptions): Promise<TrackClickResult> {
    assertPlainObject('trackClick params', params);
    assertKnownKeys('trackClick params', params, CLICK_FIELDS);
    const request = resolveRequestOptions('trackClick options', options, { timeoutMs: this.timeoutMs, maxRetries: 0 });
    const body: ClickRequest = {
      affiliate_url: params.affiliateUrl,
      user_agent: params.userAgent,
      referrer_url: params.referrerUrl,
      page_url: params.pageUrl,
      existing_click_id: params.existingClickId,
    };
    const response = await this.#sender.send<ClickResponse>({ method: 'POST', path: ROUTES.trackClick.path, body, authenticated: false, ...request });
    const { success: _success, ...click } = response.body;
    return { ...meta(response), ...click };
  }

  #requireKey(method: string): void {
    if (!this.#hasKey) {
      throw new AuthenticationError({
        status: null,
        code: null,
        message: `${method} needs a program API key: pass apiKey to new Reftrack() or set REFTRACK_API_KEY.`,
      });
    }
  }
}
