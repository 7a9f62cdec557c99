/**
 * `reftrack webhooks …`: a workspace's outbound webhook endpoints from the terminal, for its owners
 * (docs/webhooks.md), with the login token of `reftrack login`. The workspace is --workspace, else
 * the one of the account's first program. A signing secret is printed only by `create` and
 * `rotate-secret`, once.
 */
import { BRAND, ERRORS, WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointWithSecret } from '@reftrack/contract';
import { usageError } from '../../cli-error.js';
import { requireLogin, resolveBaseUrl } from '../../config/resolve.js';
import { openLoginStore } from '../../config/store.js';
import type { CommonFlags, Context } from '../../context.js';
import { ShapeError, parsePrograms } from '../../http/validate.js';
import type { Client } from '../../http/client.js';
import { table } from '../../table.js';

export interface WebhooksFlags extends CommonFlags {
  workspace?: string;
  events?: string;
  program?: string;
  partner?: string;
  description?: string;
  url?: string;
  enable?: boolean;
  disable?: boolean;
  page?: string;
}

const cli = BRAND.cli;

function positiveId(value: string, what: string): number {
  if (!/^\d{1,15}$/.test(value.trim()) || Number(value) < 1) throw usageError(`${what} must be a positive integer, got "${value}".`, `Run \`${cli} webhooks list\` to see the ids.`);
  return Number(value);
}

function eventList(value: string): string[] {
  const types = value.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = types.filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (types.length === 0 || unknown.length > 0) throw usageError(`--events must be a comma-separated list of: ${WEBHOOK_EVENT_TYPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}.`);
  return types;
}

function data<T>(body: Record<string, unknown>, where: string, array = false): T {
  const value = body.data;
  if (array ? !Array.isArray(value) : typeof value !== 'object' || value === null || Array.isArray(value)) throw new ShapeError(where, 'data', array ? 'an array' : 'an object');
  return value as T;
}

async function session(ctx: Context, flags: WebhooksFlags): Promise<{ client: Client; token: string }> {
  const store = await openLoginStore(ctx.env);
  const stored = store.get();
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: stored });
  const login = requireLogin(stored, baseUrl, ERRORS.cliProgramsMissingAuth.message);
  return { client: ctx.client(baseUrl), token: login.token };
}

async function workspaceOf(ctx: Context, flags: WebhooksFlags, client: Client, token: string): Promise<number> {
  if (flags.workspace) return positiveId(flags.workspace, '--workspace');
  const first = parsePrograms((await client.call('cliPrograms', { token })).body)[0];
  if (!first) throw usageError('Your account has no program yet, so its workspace is unknown.', `Pass --workspace <id>, or create a program with \`${cli} init\`.`);
  return first.advertiser_id;
}

const endpointRow = (e: WebhookEndpoint): string[] => [
  String(e.id),
  e.url,
  e.event_types.join(','),
  e.program_id === null ? 'all' : String(e.program_id),
  e.partner_id === null ? '—' : String(e.partner_id),
  e.disabled_reason === 'failing' ? 'DISABLED (failing)' : e.enabled ? 'enabled' : 'disabled',
];
const ENDPOINT_HEAD = ['ID', 'URL', 'EVENTS', 'PROGRAM', 'PARTNER', 'STATE'];

function printSecret(ctx: Context, e: WebhookEndpointWithSecret, rotated: boolean): void {
  ctx.out.result(e, () =>
    [
      `${rotated ? 'New signing secret' : 'Endpoint'} ${e.id} → ${e.url}`,
      '',
      `  ${e.secret}`,
      '',
      rotated
        ? `Shown only once. The previous secret keeps signing alongside it until ${e.previous_secret_expires_at}: switch your receiver before then.`
        : 'Shown only once: store it where your receiver verifies deliveries (docs/webhooks.md).',
      '',
    ].join('\n'),
  );
}

export async function webhooksList(ctx: Context, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  const workspace = await workspaceOf(ctx, flags, client, token);
  const list = data<WebhookEndpoint[]>((await client.call('cliWebhooks', { token, params: { id: workspace } })).body, 'webhooks list', true);
  ctx.out.result({ workspace_id: workspace, endpoints: list }, () => {
    if (list.length === 0) return `No webhook endpoints in workspace ${workspace}. Add one: ${cli} webhooks create <url> --events sale.created\n`;
    const failing = list.filter((e) => e.disabled_reason === 'failing').map((e) => `Endpoint ${e.id} was disabled by Reftrack: every delivery failed since ${e.failing_since}. Fix the receiver, then: ${cli} webhooks update ${e.id} --enable\n`);
    return table(ENDPOINT_HEAD, list.map(endpointRow)) + failing.join('');
  });
}

export async function webhooksCreate(ctx: Context, url: string, flags: WebhooksFlags): Promise<void> {
  if (!flags.events) throw usageError('--events is required.', `e.g. ${cli} webhooks create ${url} --events sale.created,commission.created`);
  const body: Record<string, unknown> = { url, event_types: eventList(flags.events) };
  if (flags.program) body.program_id = positiveId(flags.program, '--program');
  if (flags.partner) body.partner_id = positiveId(flags.partner, '--partner');
  if (flags.description) body.description = flags.description;
  const { client, token } = await session(ctx, flags);
  const workspace = await workspaceOf(ctx, flags, client, token);
  printSecret(ctx, data<WebhookEndpointWithSecret>((await client.call('cliWebhookCreate', { token, params: { id: workspace }, body })).body, 'webhooks create'), false);
}

export async function webhooksUpdate(ctx: Context, id: string, flags: WebhooksFlags): Promise<void> {
  const body: Record<string, unknown> = {};
  if (flags.url) body.url = flags.url;
  if (flags.events) body.event_types = eventList(flags.events);
  if (flags.program) body.program_id = flags.program === 'all' ? null : positiveId(flags.program, '--program');
  if (flags.description !== undefined) body.description = flags.description;
  if (flags.enable && flags.disable) throw usageError('Pass --enable or --disable, not both.');
  if (flags.enable) body.enabled = true;
  if (flags.disable) body.enabled = false;
  if (Object.keys(body).length === 0) throw usageError('Nothing to change.', 'Pass --url, --events, --program, --description, --enable or --disable.');
  const { client, token } = await session(ctx, flags);
  const e = data<WebhookEndpoint>((await client.call('cliWebhookUpdate', { token, params: { id: positiveId(id, 'The endpoint id') }, body })).body, 'webhooks update');
  ctx.out.result(e, () => table(ENDPOINT_HEAD, [endpointRow(e)]));
}

export async function webhooksDelete(ctx: Context, id: string, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  const endpoint = positiveId(id, 'The endpoint id');
  await client.call('cliWebhookDelete', { token, params: { id: endpoint }, body: {} });
  ctx.out.result({ deleted: endpoint }, () => `Endpoint ${endpoint} deleted with its delivery log.\n`);
}

export async function webhooksRotate(ctx: Context, id: string, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  printSecret(ctx, data<WebhookEndpointWithSecret>((await client.call('cliWebhookRotate', { token, params: { id: positiveId(id, 'The endpoint id') }, body: {} })).body, 'webhooks rotate-secret'), true);
}

export async function webhooksTest(ctx: Context, id: string, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  const d = data<WebhookDelivery>((await client.call('cliWebhookTest', { token, params: { id: positiveId(id, 'The endpoint id') }, body: {} })).body, 'webhooks test');
  ctx.out.result(d, () => `Test event ${d.message_id} queued (delivery ${d.id}). See it arrive: ${cli} webhooks deliveries ${d.endpoint_id}\n`);
}

export async function webhooksDeliveries(ctx: Context, id: string, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  const page = flags.page ? positiveId(flags.page, '--page') : 1;
  const res = await client.call('cliWebhookDeliveries', { token, params: { id: positiveId(id, 'The endpoint id') }, query: { page: String(page), pageSize: '25' } });
  const list = data<WebhookDelivery[]>(res.body, 'webhooks deliveries', true);
  ctx.out.result({ deliveries: list, meta: res.body.meta }, () => {
    if (list.length === 0) return 'No deliveries yet.\n';
    return table(
      ['ID', 'EVENT', 'WEBHOOK-ID', 'STATUS', 'ATTEMPTS', 'CODE', 'MS', 'NEXT RETRY', 'ERROR'],
      list.map((d) => [
        String(d.id),
        d.event_type,
        d.message_id,
        d.status,
        String(d.attempts),
        d.last_attempt?.status_code == null ? '—' : String(d.last_attempt.status_code),
        d.last_attempt?.duration_ms == null ? '—' : String(d.last_attempt.duration_ms),
        d.next_attempt_at ?? '—',
        d.last_attempt?.error ?? '',
      ]),
    );
  });
}

export async function webhooksResend(ctx: Context, deliveryId: string, flags: WebhooksFlags): Promise<void> {
  const { client, token } = await session(ctx, flags);
  const d = data<WebhookDelivery>((await client.call('cliWebhookResend', { token, params: { id: positiveId(deliveryId, 'The delivery id') }, body: {} })).body, 'webhooks resend');
  ctx.out.result(d, () => `Delivery ${d.id} (${d.message_id}) queued again, with the same webhook-id.\n`);
}
