/**
 * The cookie store as the tracker sees it. `document` fits as it is; unit tests pass an object
 * whose `cookie` accessor imitates a browser.
 */
export interface Jar {
  cookie: string;
}

export function readCookie(jar: Jar, name: string): string | null {
  // Browsers join cookies with '; '; the leading one makes the first cookie match too.
  const v = ('; ' + jar.cookie).split('; ' + name + '=')[1];
  // An emptied cookie (`name=`) counts as absent.
  return (v && v.split(';')[0]) || null;
}

/** A `document.cookie` assignment; `domain` '' makes a host-only cookie. */
export function cookieString(name: string, value: string, maxAgeSeconds: number, domain: string, secure: boolean): string {
  return name + '=' + value + ';Max-Age=' + maxAgeSeconds + ';Path=/;SameSite=Lax' + (domain ? ';Domain=' + domain : '') + (secure ? ';Secure' : '');
}
