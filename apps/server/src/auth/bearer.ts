/** Authorization header parsing shared by every Bearer credential (5.3). */
export type BearerParse =
  | { kind: 'absent' }
  | { kind: 'malformed' }
  | { kind: 'empty' }
  | { kind: 'token'; token: string };

export function parseBearer(header: string | undefined): BearerParse {
  if (header === undefined || header === '') return { kind: 'absent' };
  // HTTP trims trailing whitespace, so "Bearer " arrives as "Bearer": an empty token, not a malformed header.
  if (header === 'Bearer') return { kind: 'empty' };
  if (!header.startsWith('Bearer ')) return { kind: 'malformed' };
  const token = header.slice(7).trim();
  return token ? { kind: 'token', token } : { kind: 'empty' };
}

export function bearerToken(header: string | undefined): string | undefined {
  const parsed = parseBearer(header);
  return parsed.kind === 'token' ? parsed.token : undefined;
}
