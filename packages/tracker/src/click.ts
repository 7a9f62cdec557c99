import type { ClickRequest } from '@reftrack/contract';

/** The click call's body, read from the page's globals (unit tests stub them). */
export function clickBody(sessionId: string | undefined, existing: string | null): ClickRequest {
  return {
    affiliate_url: location.href,
    page_url: location.href,
    page_title: document.title,
    referrer_url: document.referrer,
    session_id: sessionId,
    screen_resolution: screen.width + 'x' + screen.height,
    viewport_size: innerWidth + 'x' + innerHeight,
    language: navigator.language,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    user_agent: navigator.userAgent,
    // Undefined fields vanish in JSON.stringify, so an absent id is not sent at all.
    existing_click_id: existing || undefined,
  };
}
