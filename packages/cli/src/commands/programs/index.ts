/** `reftrack programs`: the programs of the logged-in account, keys masked. */
import { BRAND, ERRORS } from '@reftrack/contract';
import { requireLogin, resolveBaseUrl } from '../../config/resolve.js';
import { openLoginStore } from '../../config/store.js';
import type { CommonFlags, Context } from '../../context.js';
import { parsePrograms } from '../../http/validate.js';
import { table } from '../../table.js';

export async function programs(ctx: Context, flags: CommonFlags): Promise<void> {
  const store = await openLoginStore(ctx.env);
  const stored = store.get();
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: stored });
  const login = requireLogin(stored, baseUrl, ERRORS.cliProgramsMissingAuth.message);
  const res = await ctx.client(baseUrl).call('cliPrograms', { token: login.token });
  const list = parsePrograms(res.body);
  ctx.out.result({ programs: list, ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}) }, () => {
    if (list.length === 0) return `No programs yet. Create one with \`${BRAND.cli} init\`.\n`;
    return table(
      ['ID', 'NAME', 'DOMAIN', 'COMMISSION', 'WINDOW', 'LEADS', 'KEY'],
      list.map((p) => [String(p.id), p.name, p.domain, `${p.commission_type} ${p.commission_rate}`, `${p.attribution_window_days}d`, p.lead_auth, p.api_key_revealed_at === null ? `not generated (${BRAND.cli} keys generate ${p.id})` : (p.api_token_masked ?? '(none)')]),
    );
  });
}
