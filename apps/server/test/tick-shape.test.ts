/**
 * Node's `process.nextTick` objects keep one shape for the life of the server (ops/tick-shape.ts,
 * docs/performance.md "The slow `process.nextTick`, found"). Each case runs a child process with
 * V8's natives syntax: ticks, then major collections while no tick is alive, then ticks again,
 * and prints the feedback of `process.nextTick` (`%DebugPrint`), whose tick literal defines four
 * keys. The second case, without the keeper, is the control: it shows that the collections do
 * turn the literal's key sites megamorphic on this Node, so the first case can fail. If a Node
 * release stops doing so, the control fails and says the keeper can go.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'tsup';
import { tickObjectKept } from '../src/ops/tick-shape.js';
import { startTestServer } from './helpers/index.js';

const run = promisify(execFile);
const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let dir = '';

const CHILD = `
import { keepTickObjectShape } from './tick-shape.js';
if (process.argv[2] === 'keep') keepTickObjectShape();
const noop = () => {};
const turn = () => new Promise((resolve) => setImmediate(resolve));
async function ticks() {
  for (let i = 0; i < 50; i++) {
    for (let j = 0; j < 100; j++) process.nextTick(noop);
    await turn();
  }
}
await ticks();
// V8 keeps an unreferenced map through a few major collections before it frees it: ten, each
// from a timer, when no tick object is alive.
for (let k = 0; k < 10; k++) {
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await ticks();
%DebugPrint(process.nextTick);
`;

/** The states of the tick literal's key definitions in `process.nextTick`'s feedback, in order. */
async function keySiteStates(mode: 'keep' | 'none'): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--allow-natives-syntax', path.join(dir, 'child.mjs'), mode], { maxBuffer: 16 * 1024 * 1024 });
  return [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] ?? '');
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-tick-shape-'));
  await build({ entry: { 'tick-shape': path.join(serverDir, 'src/ops/tick-shape.ts') }, outDir: dir, format: ['esm'], platform: 'node', target: 'node20', silent: true, config: false });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
}, 60_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("The server process: Node's tick objects keep their shape", () => {
  it('with a tick object kept, the tick literal stays monomorphic through major collections', async () => {
    expect(await keySiteStates('keep')).toEqual(['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);
  });

  it('without it, the same collections turn the literal megamorphic (the control: what the keeper prevents on this Node)', async () => {
    expect(await keySiteStates('none')).toEqual(['MONOMORPHIC', 'MEGAMORPHIC', 'MEGAMORPHIC', 'MEGAMORPHIC']);
  });

  it('the server keeps one as it starts', async () => {
    expect(tickObjectKept()).toBe(false);
    const server = await startTestServer();
    try {
      expect(tickObjectKept()).toBe(true);
    } finally {
      await server.close();
    }
  });
});
