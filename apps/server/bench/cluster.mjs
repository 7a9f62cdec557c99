/**
 * Runs N copies of `reftrack-server start` on one port with `node:cluster` (used when the
 * benchmark is given `--processes N`, for PostgreSQL scale-out). The server itself has no cluster
 * mode; this launcher only exists so that one load generator can address all processes at one
 * address, as a load balancer in front of them would.
 *
 * Env: BENCH_SERVER_MAIN (path of dist/main.js), BENCH_PROCESSES (N), plus the server's own env.
 * Prints `workers [pid,...]` once every worker listens.
 */
import cluster from 'node:cluster';
import { pathToFileURL } from 'node:url';

const main = process.env.BENCH_SERVER_MAIN;
const count = Number(process.env.BENCH_PROCESSES ?? 1);

if (cluster.isPrimary) {
  const pids = [];
  // One at a time: every `start` runs the migrations first, and concurrent runs would trip over
  // knex's migration lock. A worker that is listening has finished migrating.
  for (let i = 0; i < count; i++) {
    const worker = cluster.fork();
    pids.push(worker.process.pid);
    await new Promise((resolve, reject) => {
      worker.once('listening', resolve);
      worker.once('exit', (code) => reject(new Error(`worker ${i} exited with code ${code} before listening`)));
    }).catch((err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
  }
  process.stdout.write(`workers ${JSON.stringify(pids)}\n`);
  const stop = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  cluster.on('exit', () => {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
} else {
  // The server's command line reads process.argv when its module is evaluated.
  process.argv = [process.argv[0], main, 'start'];
  await import(pathToFileURL(main).href);
}
