/**
 * First click wins: a stored click id is never replaced, not even refreshed, so that the cookie
 * keeps pointing at the first partner and keeps that click's expiry.
 * Answers the id to write, or null to leave the cookie alone.
 */
export function clickIdToStore(existing: string | null, returned: string | undefined): string | null {
  return !existing && returned ? returned : null;
}

/** The `aff` referral code carried by a URL, or null. */
export function affOf(url: string): string | null {
  return new URL(url).searchParams.get('aff');
}
