/**
 * Summary of a V8 CPU profile (`node --cpu-prof`) of a server child: self time by package and the
 * hottest functions, so that the report says where a route's time goes without opening a viewer.
 */
import fs from 'node:fs';

/**
 * Which package or part of the runtime a frame belongs to.
 * @param {{ functionName: string, url: string }} frame
 */
function owner(frame) {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pnpm) return pnpm[1];
  const plain = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (plain) return plain[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (/\/dist\/[^/]+\.js$/.test(url)) return 'reftrack server';
  return url.split('/').slice(-2).join('/');
}

/**
 * @param {string} file a .cpuprofile
 * @param {number} top how many functions to list
 * @returns {{ totalMs: number, busyMs: number, byOwner: Array<{ owner: string, ms: number, pct: number }>, functions: Array<{ fn: string, owner: string, ms: number, pct: number }>, serverInclusive: Array<{ fn: string, ms: number, pct: number }> }}
 */
export function summarizeProfile(file, top = 15) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  /** @type {Map<number, any>} */
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} node id → self microseconds */
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  let idle = 0;
  const byOwner = new Map();
  const byFn = new Map();
  for (const [id, us] of self) {
    const frame = nodes.get(id).callFrame;
    total += us;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const o = owner(frame);
    byOwner.set(o, (byOwner.get(o) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.split('/').pop()}:${frame.lineNumber + 1}` : ''}`.trim();
    const prev = byFn.get(fn) ?? { owner: o, us: 0 };
    prev.us += us;
    byFn.set(fn, prev);
  }
  // Inclusive time of the server's own functions: each sample counts once for every distinct
  // server function on its stack (only the synchronous part of an async function is on a stack).
  /** @type {Map<number, number>} child id → parent id */
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map();
  profile.samples.forEach((id, i) => {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const f = nodes.get(cur).callFrame;
      if (owner(f) !== 'reftrack server') continue;
      const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
  });
  const busy = total - idle;
  const pct = (us) => Math.round((1000 * us) / Math.max(1, busy)) / 10;
  return {
    totalMs: Math.round(total / 1000),
    busyMs: Math.round(busy / 1000),
    byOwner: [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([o, us]) => ({ owner: o, ms: Math.round(us / 1000), pct: pct(us) })),
    serverInclusive: [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top).map(([fn, us]) => ({ fn, ms: Math.round(us / 1000), pct: pct(us) })),
    functions: [...byFn].sort((a, b) => b[1].us - a[1].us).slice(0, top).map(([fn, v]) => ({ fn, owner: v.owner, ms: Math.round(v.us / 1000), pct: pct(v.us) })),
  };
}

/** @param {ReturnType<typeof summarizeProfile>} s */
export function renderProfile(s) {
  return [
    `  busy ${s.busyMs} ms of ${s.totalMs} ms profiled; self time by package (% of busy):`,
    ...s.byOwner.map((o) => `    ${String(o.pct).padStart(5)}%  ${o.owner}`),
    '  hottest functions (self time):',
    ...s.functions.map((f) => `    ${String(f.pct).padStart(5)}%  ${f.fn}  [${f.owner}]`),
    "  the server's own functions, inclusive (synchronous part only):",
    ...s.serverInclusive.map((f) => `    ${String(f.pct).padStart(5)}%  ${f.fn}`),
  ].join('\n');
}
