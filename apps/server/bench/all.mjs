// `pnpm bench`: the hot write path (run.mjs: click, lead, sale against a bare node:http server),
// the memory rate limiter's cost per client (rate-store.mjs), the Stripe intake under unsigned
// 500 KB requests with 2,000 connected programs (stripe-intake.mjs), then the event listing with
// one million events (listing.mjs, SQLite). Arguments go to run.mjs; `--skip-listing` leaves the
// listing out.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STORED_MISMATCH_EXIT } from './write-checks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2).filter((a) => a !== '--');
const skipListing = args.includes('--skip-listing');
const runArgs = args.filter((a) => a !== '--skip-listing');
const hot = spawnSync(process.execPath, [path.join(here, 'run.mjs'), ...runArgs], { stdio: 'inherit' });
let status = hot.status ?? 1;
const rateStore = spawnSync(process.execPath, [path.join(here, 'rate-store.mjs')], { stdio: 'inherit' });
status ||= rateStore.status ?? 1;
const stripeIntake = spawnSync(process.execPath, [path.join(here, 'stripe-intake.mjs')], { stdio: 'inherit' });
status ||= stripeIntake.status ?? 1;
if (!skipListing) {
  const listing = spawnSync(process.execPath, [path.join(here, 'listing.mjs'), '--connections', '4'], { stdio: 'inherit' });
  status ||= listing.status ?? 1;
}
// Said again at the very end: the other benchmarks' output follows run.mjs's banner.
if (hot.status === STORED_MISMATCH_EXIT) console.error('\npnpm bench: FAILED — stored rows differ from acknowledged writes (the banner above names the runs)');
process.exit(status);
