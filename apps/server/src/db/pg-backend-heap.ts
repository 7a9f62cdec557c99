/**
 * One statement for each new PostgreSQL connection that runs the server's statements (the request,
 * job and stats pools in knex.ts, the click writer's in postgres-click-writer.ts; the key notices'
 * listener only listens), so that its backend stops giving memory back to the kernel after every
 * transaction.
 *
 * A backend frees each transaction's memory contexts at its end. glibc's malloc returns the top of
 * its heap to the kernel (`brk`) whenever more than its trim threshold (128 KiB at start) is free
 * there, so every batch grew the heap again and touched fresh pages: under the click load about
 * 3.5 `brk` calls and 20 page faults per batch; with the heap kept, PostgreSQL's CPU per click
 * was 12–30% lower (docs/performance.md, "PostgreSQL's heap, kept between batches").
 *
 * glibc raises both thresholds by itself once a block it had mapped on its own (one above the
 * mapping threshold) is freed: the mapping threshold to that block's size, the trim threshold to
 * twice it. This statement makes the backend allocate and free one such block of 4 MiB (the text
 * `repeat` builds; only its length comes back), so from then on up to 8 MiB stay at the heap's top
 * between transactions. A backend on another allocator, or with glibc's thresholds fixed by
 * environment variables, just runs the statement; the answers are the same either way.
 */
import type pg from 'pg';

export const KEEP_HEAP_SQL = "select length(repeat('x', 4194304))";

/**
 * Runs the statement on a new connection, before its first use. Its failure costs only that: the
 * connection is used anyway, and one that is gone fails its first real statement as it would have.
 */
export async function keepHeap(client: pg.ClientBase): Promise<void> {
  await client.query(KEEP_HEAP_SQL).catch(() => undefined);
}
