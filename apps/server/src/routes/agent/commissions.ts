/** /api/agent/v1/programs/:id/{commissions,balances,payouts} — the ledger for agent keys with `commissions:read` (docs/agent-api.md). */
import type { Context } from 'koa';
import { ERRORS, type BalancesResponse, type LedgerResponse, type PayoutListResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { parseId } from '../../auth/workspace-access.js';
import { readBalances, readLedger } from '../../db/commission-ledger.js';
import { parseLedgerQuery } from '../../domain/ledger-query.js';
import { readPayouts } from '../../domain/payouts.js';

/** A program of another workspace answers 404, like a missing one. */
async function agentProgram(deps: AppDeps, ctx: Context): Promise<number> {
  const id = parseId(ctx.params.id);
  const row = await deps.db('programs').where({ id, workspace_id: ctx.state.agent!.workspaceId }).first('id');
  if (!row) fail(ERRORS.programNotFound);
  return id;
}

export function agentListCommissions(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const { filter, limit } = parseLedgerQuery(await agentProgram(deps, ctx), ctx.query);
    const rows = await readLedger(deps.db, filter, limit + 1);
    const page = rows.slice(0, limit);
    ctx.body = { success: true, data: page, meta: { next_cursor: rows.length > limit ? String(page[page.length - 1].id) : null } } satisfies LedgerResponse;
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
