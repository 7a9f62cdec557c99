/**
 * The benchmark fixture (the design's fixture format, loaded with `reftrack-server seed --file`).
 *
 * Why so many programs: the sale route is rate limited per API key (120 requests a minute). A
 * benchmark against one key would be refused after 120 requests, so the only honest way to drive
 * the real sale path at thousands of requests a second is many programs, each with its own key,
 * and a load generator that rotates keys so that no key goes over its budget during the run.
 * Each program gets one referral link `p<n>` (partner Pat, enrolled in every program) so that the
 * click warm-up can create customers in every program — a sale key must match its customer's program.
 */

/** The key of the design's sample program (program 1). */
export const PROGRAM1_KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
/** The link the measured click run hits (the design's sample link). */
export const HOT_LINK = 'pat20';
/** The measured click request's headers and body (run.mjs, instruction-counts.mjs): a browser's click on the hot link. */
export const CLICK_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
export const CLICK_HEADERS = { 'Content-Type': 'application/json', 'User-Agent': CLICK_USER_AGENT };
export const CLICK_BODY = JSON.stringify({ affiliate_url: `https://acme.test/?aff=${HOT_LINK}`, page_url: 'https://acme.test/', session_id: 's1' });

/**
 * A distinct 36-character key per program: `aff_bench` + six digits + fixed filler.
 * @param {number} n program id (1-based)
 * @returns {string}
 */
export function programKey(n) {
  if (n === 1) return PROGRAM1_KEY;
  const key = `aff_bench${String(n).padStart(6, '0')}ABCDEFGHIJKLMNOPQRSTU`;
  return key;
}

/** @param {number} n */
export const programDomain = (n) => (n === 1 ? 'acme.test' : `bench${n}.test`);

/** @param {number} n */
export const programLink = (n) => `p${n}`;

/**
 * @param {number} programs how many programs (≥ 1); program 1 is the design's sample "Acme"
 * @returns {object} the fixture object
 */
export function buildFixture(programs) {
  const ids = Array.from({ length: programs }, (_, i) => i + 1);
  return {
    accounts: [{ email: 'owner@acme.test', name: 'Ada Owner' }],
    workspaces: [{ id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }] }],
    programs: ids.map((n) => ({
      id: n,
      workspace: 1,
      name: n === 1 ? 'Acme' : `Bench ${n}`,
      domain: programDomain(n),
      // recurring: every sale of a customer earns a commission, so each sale request writes
      // sale + commission + platform fee — the full sale path, not the "already converted" shortcut.
      commission_type: 'recurring_percent',
      commission_rate: 20,
      attribution_window_days: 60,
      lead_auth: 'server_required',
      api_key: programKey(n),
    })),
    partners: [{ id: 1, name: 'Pat Partner', email: 'pat@partner.test', code: 'pat' }],
    enrollments: ids.map((n) => ({ partner: 1, program: n })),
    links: [{ short_link: HOT_LINK, partner: 1, program: 1, active: true }, ...ids.map((n) => ({ short_link: programLink(n), partner: 1, program: n, active: true }))],
  };
}
