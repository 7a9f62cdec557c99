/**
 * Drain on SIGTERM (docs/operator.md, "Drain"), under load, through a real nginx running
 * deploy/nginx/reftrack.conf and directly: /readyz turns 503 at once, the process serves through
 * SHUTDOWN_GRACE_MS, then stops accepting, finishes in flight and exits 0. Requests sent before the
 * grace period ended get no reset and no 5xx; every click answered 200 is stored.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const SITE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'deploy', 'nginx', 'reftrack.conf');
// The default grace: longer than the site file's upstream keepalive_timeout (4 s), as deploy.md requires.
const GRACE_MS = 5_000;

let db: Database | undefined;
let nginx: ChildProcess | undefined;
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill('SIGKILL');
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.once('exit', r));
    nginx.kill('SIGQUIT');
    await exited;
  }
  await db?.drop();
});

/** The site file with this test's ports and a throw-away certificate on the lines marked "test:". */
async function startNginx(upstreams: number[]): Promise<{ port: number; prefix: string }> {
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-nginx-'));
  const [port, httpPort] = [await freePort(), await freePort()];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=track.example.com', '-keyout', `${prefix}/key.pem`, '-out', `${prefix}/cert.pem`], { stdio: 'ignore' });
  let upstreamLine = 0;
  const site = fs
    .readFileSync(SITE, 'utf8')
    .split('\n')
    .map((line) => {
      if (line.includes('# test: upstream')) return `    server 127.0.0.1:${upstreams[upstreamLine++]} max_fails=1 fail_timeout=5s;`;
      if (line.includes('# test: https')) return `    listen 127.0.0.1:${port} ssl http2;`;
      if (line.includes('# test: http')) return `    listen 127.0.0.1:${httpPort};`;
      if (line.includes('# test: cert')) return `    ssl_certificate ${prefix}/cert.pem;`;
      if (line.includes('# test: key')) return `    ssl_certificate_key ${prefix}/key.pem;`;
      return line;
    })
    .join('\n');
  expect(upstreamLine).toBe(upstreams.length);
  fs.writeFileSync(`${prefix}/reftrack.conf`, site);
  fs.writeFileSync(
    `${prefix}/nginx.conf`,
    `worker_processes 1;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/error.log warn;\nevents { worker_connections 1024; }\n` +
      `http {\n  access_log ${prefix}/access.log;\n  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;\n  include ${prefix}/reftrack.conf;\n}\n`,
  );
  nginx = spawn('/usr/sbin/nginx', ['-p', prefix, '-c', `${prefix}/nginx.conf`, '-g', 'daemon off;'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      await request(https, { port, path: '/healthz', method: 'GET', agent: new https.Agent({ rejectUnauthorized: false }) });
      return { port, prefix };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nginx did not start: ${fs.readFileSync(`${prefix}/error.log`, 'utf8')}`);
}

interface Outcome {
  sentAt: number;
  status: number;
  error?: string;
}

function request(mod: typeof http | typeof https, options: http.RequestOptions & { body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = mod.request({ host: '127.0.0.1', ...options, headers: { 'content-type': 'application/json', ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Loops sending clicks until `until()` is true; each request from its own client address (the click limit is per address). */
async function clickLoop(send: (n: number) => Promise<{ status: number }>, until: () => boolean, out: Outcome[]): Promise<void> {
  while (!until()) {
    const sentAt = Date.now();
    const n = out.length;
    out.push({ sentAt, status: -1 });
    try {
      out[n].status = (await send(n)).status;
    } catch (err) {
      out[n].status = 0;
      out[n].error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    }
  }
}

describe('drain on SIGTERM', () => {
  it('through nginx and directly: readyz 503 during the grace period, no reset and no 5xx, every acknowledged click stored', async () => {
    db = await freshDatabase('postgres');
    const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: String(GRACE_MS) };
    await seed(env, programsFixture(1).fixture);
    const [a, b] = [await spawnServer(env), await spawnServer(env)];
    servers.push(a, b);
    const { port } = await startNginx([a.port, b.port]);
    const viaNginx = new https.Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: 64 });
    const direct = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const body = JSON.stringify({ affiliate_url: 'https://rel.test/?aff=p1' });
    let counter = 0;
    // A client address per 40 requests: nginx passes the connection's own address on (TRUST_PROXY=1).
    const local = () => {
      const k = Math.floor(counter++ / 40);
      return `127.1.${(k >> 8) & 255}.${(k & 255) || 1}`;
    };
    const nginxClick = () => request(https, { port, path: '/api/v1/track/click', method: 'POST', body, agent: viaNginx, localAddress: local() });
    let directN = 0;
    const directClick = () => request(http, { port: a.port, path: '/api/v1/track/click', method: 'POST', body, agent: direct, headers: { 'x-forwarded-for': `198.51.${(directN >> 8) & 255}.${directN++ & 255}` } });

    const throughNginx: Outcome[] = [];
    const toA: Outcome[] = [];
    let stop = false;
    let graceEnd = Infinity;
    const aExited = new Promise<number | null>((resolve) => a.child.once('exit', (code) => resolve(code)));
    let aGone = false;
    void aExited.then(() => (aGone = true));
    const loops = [
      ...Array.from({ length: 6 }, () => clickLoop(nginxClick, () => stop, throughNginx)),
      // Direct clients stop once the process is gone (afterwards every connect is refused, as it should be).
      ...Array.from({ length: 4 }, () => clickLoop(directClick, () => stop || Date.now() > graceEnd, toA)),
    ];
    await new Promise((r) => setTimeout(r, 1_000));
    const sigterm = Date.now();
    graceEnd = sigterm + GRACE_MS;
    a.child.kill('SIGTERM');
    // /readyz turns 503 at once, while the process still answers everything else.
    await new Promise((r) => setTimeout(r, 100));
    const ready = await request(http, { port: a.port, path: '/readyz', method: 'GET' });
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body).reasons).toEqual(['draining: the process is shutting down']);
    expect(await aExited).toBe(0);
    const exitedAfter = Date.now() - sigterm;
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(loops);
    expect(aGone).toBe(true);

    const bad = (o: Outcome) => o.status === 0 || o.status >= 500;
    // The rule (docs/operator.md, "Drain"): requests sent before the grace period ended. A request
    // sent after it may still meet the moment the process stops listening (a connection nginx opened
    // just then is reset by the kernel): counted and reported, not part of the rule.
    const nginxBad = throughNginx.filter((o) => o.sentAt < graceEnd && bad(o));
    const nginxBadAfterGrace = throughNginx.filter((o) => o.sentAt >= graceEnd && bad(o)).length;
    const directBad = toA.filter((o) => o.sentAt < graceEnd && bad(o));
    const summary = {
      exitedAfterMs: exitedAfter,
      throughNginx: { requests: throughNginx.length, beforeGraceEnd: throughNginx.filter((o) => o.sentAt < graceEnd).length, ok: throughNginx.filter((o) => o.status === 200).length, bad: nginxBad, badAfterGrace: nginxBadAfterGrace },
      direct: { requests: toA.length, beforeGraceEnd: toA.filter((o) => o.sentAt < graceEnd).length, bad: directBad },
    };
    console.log(JSON.stringify({ drain: { ...summary, throughNginx: { ...summary.throughNginx, bad: nginxBad.length }, direct: { ...summary.direct, bad: directBad.length } } }));
    expect(nginxBad, JSON.stringify(nginxBad.slice(0, 5))).toEqual([]);
    expect(directBad, JSON.stringify(directBad.slice(0, 5))).toEqual([]);
    expect(throughNginx.filter((o) => o.sentAt < graceEnd && o.status !== 200)).toEqual([]);

    // Every click answered 200 is stored, whichever process answered it.
    const acknowledged = [...throughNginx, ...toA].filter((o) => o.status === 200).length;
    const [row] = await query<{ n: string }>(db, 'select count(*) as n from click_events');
    expect(Number(row.n)).toBe(acknowledged);
    viaNginx.destroy();
    direct.destroy();
  });
});
