/**
 * The queue behind PostgreSQL's lead and sale group commits (db/group-commit-queue.ts): what
 * arrives while a group runs goes in the next one, every item is settled once, and a group runs in
 * the async context of a request that is in it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { GroupCommitQueue, type BatchOutcome } from '../src/db/group-commit-queue.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('group commit queue', () => {
  it('a lone item goes at once; items that arrive while a group runs go together in the next, at most the cap', async () => {
    const groups: number[][] = [];
    const queue = new GroupCommitQueue<number, number>(async (items, outcome) => {
      groups.push(items);
      await tick();
      items.forEach((item, i) => outcome.done(i, item * 10));
    }, 3);
    const first = queue.submit(1);
    const rest = [2, 3, 4, 5].map((n) => queue.submit(n));
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40, 50]);
    expect(groups).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('an item sent round again goes first in the next group; a refusal reaches only its own item', async () => {
    const groups: string[][] = [];
    let rounds = 0;
    const queue = new GroupCommitQueue<string, string>(async (items, outcome: BatchOutcome<string>) => {
      groups.push(items);
      await tick();
      rounds++;
      items.forEach((item, i) => {
        if (item === 'again' && rounds === 2) outcome.again(i);
        else if (item === 'bad') outcome.failed(i, new Error('refused'));
        else outcome.done(i, `${item}@${rounds}`);
      });
    }, 10);
    const answers = [queue.submit('a'), queue.submit('again'), queue.submit('bad'), queue.submit('b')].map((p) => p.then((v) => v, (e: Error) => e.message));
    await tick();
    const late = queue.submit('late');
    expect(await Promise.all([...answers, late])).toEqual(['a@1', 'again@3', 'refused', 'b@2', 'late@3']);
    expect(groups).toEqual([['a'], ['again', 'bad', 'b'], ['again', 'late']]);
  });

  it('when a group throws, its unsettled items fail with what it threw and the next group still runs', async () => {
    const queue = new GroupCommitQueue<number, number>(async (items, outcome) => {
      if (items.includes(0)) {
        outcome.done(items.indexOf(0), 0);
        throw new Error('connection lost');
      }
      await tick();
      items.forEach((item, i) => outcome.done(i, item));
    }, 10);
    // 9 goes alone; 0 and 1 arrive while it runs, and go together.
    const lone = queue.submit(9);
    const lost = [queue.submit(0), queue.submit(1)];
    expect(await lone).toBe(9);
    const results = await Promise.allSettled(lost);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 0 });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'connection lost' } });
    expect(await queue.submit(2)).toBe(2);
  });

  it('an item left unsettled fails rather than waiting for ever', async () => {
    const queue = new GroupCommitQueue<number, number>(async () => undefined, 10);
    await expect(queue.submit(1)).rejects.toThrow('a group commit left an item unsettled');
  });

  it('a group runs in the async context of its first item', async () => {
    const request = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const queue = new GroupCommitQueue<string, string>(async (items, outcome) => {
      seen.push(request.getStore());
      await tick();
      items.forEach((item, i) => outcome.done(i, item));
    }, 10);
    await Promise.all(['r1', 'r2', 'r3'].map((id) => request.run(id, () => queue.submit(id))));
    expect(seen).toEqual(['r1', 'r2']);
  });
});
