/**
 * POST /demo/shop/signup and /demo/shop/buy — the demo shop's "backend". Like an advertiser's
 * server, it reports the lead and the sale to the tracking API with the program key (the demo key,
 * which never reaches the browser), over HTTP to this same server: the page walks the exact path
 * an integration takes, key check, rate limits and attribution included. The API's answer (or its
 * error envelope) is passed back as it came.
 */
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { ERRORS, ROUTES } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';

/** The demo product: one payment of 49.00 USD. */
const PRICE = { amount_cents: 4900, currency: 'usd' } as const;

interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A request to the server that received `ctx`, at the address and port it arrived on, with the
 * same Host (which passed the host gate): the demo needs no configuration of its own address.
 */
function selfCall(ctx: Context, path: string, apiKey: string, body: unknown): Promise<ApiAnswer> {
  const { localAddress, localPort } = ctx.req.socket;
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: localAddress,
        port: localPort,
        path,
        method: 'POST',
        headers: { host: ctx.get('host'), 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: `Bearer ${apiKey}`, 'user-agent': 'reftrack-demo-shop' },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 502, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('demo shop: the tracking API did not answer')));
    req.on('error', reject);
    req.end(payload);
  });
}

const idLike = (value: unknown, pattern: RegExp): value is string => typeof value === 'string' && value.length <= 200 && pattern.test(value);

function relay(ctx: Context, answer: ApiAnswer): boolean {
  if (answer.status >= 200 && answer.status < 300) return true;
  ctx.status = answer.status;
  ctx.body = answer.body;
  return false;
}

export function demoShopSignup(deps: AppDeps) {
  return async function handleSignup(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    if (!idLike(body.click_id, /^clk_[A-Za-z0-9]+$/)) fail(ERRORS.demoShopInput);
    // A new customer of the shop; the same value goes into the sale (6.1 rule 6).
    const customerKey = `demo_${randomBytes(6).toString('hex')}`;
    const lead = await selfCall(ctx, ROUTES.trackLead.path, deps.demo!.apiKey, { click_id: body.click_id, customer_key: customerKey });
    if (!relay(ctx, lead)) return;
    ctx.body = { success: true, data: { customer_key: customerKey, lead: lead.body.data } };
  };
}

export function demoShopBuy(deps: AppDeps) {
  return async function handleBuy(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    if (!idLike(body.customer_key, /^demo_[0-9a-f]{12}$/)) fail(ERRORS.demoShopInput);
    // The order id is the idempotency key of the sale (4.3 rule 3): one per purchase.
    const sale = await selfCall(ctx, ROUTES.trackSale.path, deps.demo!.apiKey, { transaction_id: `demo_order_${randomUUID()}`, customer_key: body.customer_key, ...PRICE, provider: 'manual' });
    if (!relay(ctx, sale)) return;
    ctx.body = { success: true, data: { sale: sale.body.data } };
  };
}
