export { Reftrack } from './client.js';
export type { ReftrackOptions, RequestOptions } from './options.js';
export type {
  CurrencyCode,
  ReadinessResult,
  ResultMeta,
  SaleProvider,
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
export {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  GoneError,
  InvalidRequestError,
  KeyRotationRequiredError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ReftrackError,
} from './errors.js';
export type { ReftrackWarning, WarningHandler } from './warnings.js';
export { RETRY_DEFAULTS } from './retry-policy.js';
export { reportStripeRenewal } from './stripe-renewal.js';
export type { StripeEventLike, StripeInvoiceLike, StripeRenewalOptions, StripeRenewalResult, StripeRenewalSkipReason } from './stripe-renewal.js';
export { buildClickCookie, handleReferral, readCookie, referralMiddleware } from './handle-referral.js';
export type { HandleReferralOptions, HandleReferralResult, KoaContextLike, NodeRequestLike, ReferralMiddleware, WebRequestLike } from './handle-referral.js';
export { SDK_VERSION } from './version.js';
export { constructWebhookEvent, WebhookVerificationError } from './webhooks.js';
export type { ConstructEventOptions, WebhookHeaders, WebhookVerificationErrorCode, WebhooksHelper } from './webhooks.js';
export type { AnyWebhookEvent, WebhookEvent, DeliveredEventType } from '@reftrack/contract';
