/** /api/agent/v1/programs/:id/{commissions,balances,payouts} — the ledger for agent keys with `commissions:read` (docs/agent-api.md). */
import type { Context } from 'koa';
import { type BalancesResponse, type LedgerResponse, type PayoutListResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { parseId, programInWorkspace } from '../../auth/workspace-access.js';
import { readBalances, readLedgerPage } from '../../db/commission-ledger.js';
import { parseLedgerQuery } from '../../domain/ledger-query.js';
import { readPayouts } from '../../domain/payouts.js';

/** A program of the key's workspace; another workspace's answers 404, like a missing one. */
const agentProgram = (deps: AppDeps, ctx: Context): Promise<number> => programInWorkspace(deps.db, parseId(ctx.params.id), ctx.state.agent!.workspaceId);

export function agentListCommissions(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const { filter, limit } = parseLedgerQuery(await agentProgram(deps, ctx), ctx.query);
    ctx.body = (await readLedgerPage(deps.db, filter, limit)) satisfies LedgerResponse;
  };
}

export function agentListBalances(deps: AppDeps) {
  return async function handleBalances(ctx: Context): Promise<void> {
    ctx.body = { success: true, data: await readBalances(deps.db, await agentProgram(deps, ctx)) } satisfies BalancesResponse;
  };
}

export function agentListPayouts(deps: AppDeps) {
  return async function handlePayouts(ctx: Context): Promise<void> {
    ctx.body = { success: true, data: await readPayouts(deps.db, { programId: await agentProgram(deps, ctx) }) } satisfies PayoutListResponse;
  };
}
