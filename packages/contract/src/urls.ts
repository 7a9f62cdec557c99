/**
 * Where a person goes after signing in: the path of `value` when it resolves to `origin` itself,
 * else `fallback`. Browsers read `\` as `/` and drop tabs and line breaks inside URLs, so
 * `/\evil.example` and `/\t/evil.example` both lead off-site although they start with one `/`.
 * Resolving with the URL parser, as the browser then does, is the check that matches what the
 * browser will do. Used by the dashboard and inlined into the development sign-in page, so the
 * function must stay self-contained.
 */
export function sameOriginPath(value: string | null | undefined, origin: string, fallback = '/'): string {
  if (!value) return fallback;
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return fallback;
  }
  if (url.origin !== new URL(origin).origin) return fallback;
  return url.pathname + url.search + url.hash;
}
