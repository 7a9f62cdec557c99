/**
 * The approval job (docs/commissions.md, "Hold"): every process runs it at start and every minute;
 * each pass approves, in batches, the pending commissions whose hold has passed without a refund
 * (domain/commission-review.ts approveHeldCommissions). The state is the commissions themselves,
 * so the job needs no schedule of its own to survive a restart, and the conditional, row-claiming
 * update approves each commission exactly once however many processes run it.
 */
import type { AppDeps } from '../deps.js';
import { approveHeldCommissions } from '../domain/commission-review.js';

export const APPROVAL_INTERVAL_MS = 60_000;

export interface ApprovalSchedule {
  /** Runs a pass now (tests, and `reftrack-server` commands); resolves with how many were approved. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

type ApprovalDeps = Pick<AppDeps, 'atomic' | 'now' | 'logger'>;

/** Approves every commission that is due, batch after batch; how many in all. */
export async function approveDueCommissions(deps: ApprovalDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const approved = await deps.atomic((trx) => approveHeldCommissions(trx, deps.now()));
    total += approved;
    if (approved === 0) return total;
  }
}

export function scheduleCommissionApproval(deps: ApprovalDeps, intervalMs = APPROVAL_INTERVAL_MS): ApprovalSchedule {
  let running: Promise<number> | undefined;
  let stopped = false;
  const pass = (): Promise<number> => {
    // A pass still running is joined, never doubled.
    if (running) return running;
    if (stopped) return Promise.resolve(0);
    running = approveDueCommissions(deps)
      .then(
        (approved) => {
          if (approved > 0) deps.logger.info({ approved }, 'approved commissions whose hold has passed');
          return approved;
        },
        (err: unknown) => {
          deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'approving held commissions failed; retried at the next interval');
          return 0;
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  void pass();
  const timer = setInterval(() => void pass(), intervalMs);
  timer.unref();
  return {
    runNow: pass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
