/** Status and parsed body; status 0 means the request never got an answer. */
export type Reply = [status: number, body: Record<string, unknown>];

/**
 * POST JSON to `path` below `base` and never reject: a tracker must not throw into the host page,
 * not even for a malformed `base`, hence the URL is built inside the try.
 * keepalive lets the request finish when the visitor navigates away at once.
 */
export async function post(path: string, base: string, body: unknown): Promise<Reply> {
  try {
    const r = await fetch(new URL(path, base), {
      method: 'POST',
      keepalive: true,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return [r.status, await r.json().catch(() => ({}))];
  } catch (e) {
    return [0, { error: { code: 'network_error', message: String(e) } }];
  }
}
