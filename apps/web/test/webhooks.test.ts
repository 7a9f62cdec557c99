import { describe, expect, it } from 'vitest';
import type { DashboardSession, WebhookDelivery, WebhookEndpoint } from '@reftrack/contract';
import { deliveryOutcome, endpointState, webhookWorkspaceFromQuery, webhookWorkspaces } from '../src/pages/webhooks.js';

const session: DashboardSession = {
  account: { id: 1, email: 'a@example.test', name: null },
  workspaces: [
    { id: 1, name: 'W1', role: 'member' },
    { id: 2, name: 'W2', role: 'owner' },
  ],
};

const endpoint = (over: Partial<WebhookEndpoint>): WebhookEndpoint => ({
  id: 1,
  workspace_id: 2,
  url: 'https://example.com/h',
  description: null,
  event_types: ['sale.created'],
  program_id: null,
  partner_id: null,
  enabled: true,
  disabled_reason: null,
  disabled_at: null,
  failing_since: null,
  previous_secret_expires_at: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  ...over,
});

describe('webhooks page: whose endpoints', () => {
  it('owners only; the address picks the workspace, else the first one owned', () => {
    expect(webhookWorkspaces(session).map((w) => w.id)).toEqual([2]);
    expect(webhookWorkspaceFromQuery(new URLSearchParams(''), session)).toBe(2);
    expect(webhookWorkspaceFromQuery(new URLSearchParams('workspace=7'), session)).toBe(7);
    expect(webhookWorkspaceFromQuery(new URLSearchParams('workspace=x'), session)).toBe(2);
  });
});

describe('webhooks page: states in words', () => {
  it('an endpoint Reftrack disabled says so; a failing one says since when', () => {
    expect(endpointState(endpoint({}))).toBe('Enabled');
    expect(endpointState(endpoint({ enabled: false }))).toBe('Disabled');
    expect(endpointState(endpoint({ enabled: false, disabled_reason: 'failing' }))).toBe('Disabled by Reftrack: failing');
    expect(endpointState(endpoint({ failing_since: '2026-11-25T10:00:00.000Z' }))).toMatch(/^Enabled · failing since /);
  });

  it('a delivery is queued, retrying, delivered or failed', () => {
    const d = (status: WebhookDelivery['status'], attempts: number) => ({ status, attempts }) as WebhookDelivery;
    expect(deliveryOutcome(d('pending', 0))).toBe('Queued');
    expect(deliveryOutcome(d('pending', 2))).toBe('Retrying');
    expect(deliveryOutcome(d('succeeded', 1))).toBe('Delivered');
    expect(deliveryOutcome(d('failed', 22))).toBe('Failed (retries over)');
  });
});
