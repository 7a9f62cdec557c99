/** POST /api/v1/track/lead — spec 4.2, 7.4: authentication and input; the rules are domain/lead.ts. */
import type { Context } from 'koa';
import { ERRORS, INPUT_RULES } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str, testModeOf, text } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, type KeyContext } from '../../auth/program-key.js';
import { createStandaloneLead, recordTestLeadFor, type LeadInput } from '../../domain/lead.js';

// 4.2: a header that carries a token matching no program is the only 401 of this route.
const LEAD_KEY_ERRORS = { malformed: ERRORS.leadInvalidToken, missing: ERRORS.leadInvalidToken, invalid: ERRORS.leadInvalidToken };

export function trackLead(deps: AppDeps) {
  return async function handleLead(ctx: Context): Promise<void> {
    const key: KeyContext | undefined = await authenticateProgramKey(ctx, LEAD_KEY_ERRORS, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }, true);
    const body = readBody(ctx);
    const input: LeadInput = {
      clickId: str(body.click_id),
      customerKey: str(body.customer_key),
      email: text(str(body.email)?.toLowerCase(), INPUT_RULES.storedText.email),
      sessionId: text(body.session_id, INPUT_RULES.storedText.session_id),
      pageUrl: text(body.page_url, INPUT_RULES.storedText.page_url),
    };
    if (!input.clickId && !input.customerKey) fail(ERRORS.leadIdRequired);
    const test = testModeOf(body);
    if (test.testMode && key && test.programId !== undefined && test.programId !== key.programId) fail(ERRORS.programIdMismatch);
    const now = deps.now();
    ctx.body = test.testMode
      ? await recordTestLeadFor(deps.atomic, input, test.programId ?? key?.programId, now)
      : await createStandaloneLead(deps, key?.programId, input, key ? 'server' : 'browser', now);
  };
}
