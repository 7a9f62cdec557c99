/** `reftrack status`: the program behind a key, the key's rotation state and the integration checklist. */
import { resolveApiKey, resolveBaseUrl } from '../../config/resolve.js';
import type { Context } from '../../context.js';
import { parseStatus } from '../../http/validate.js';
import { loginForDefaultServer, type KeyFlags } from '../key-flags.js';

export async function status(ctx: Context, flags: KeyFlags): Promise<void> {
  const apiKey = resolveApiKey(flags.apiKey, ctx.env);
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: await loginForDefaultServer(ctx, flags) });
  const res = await ctx.client(baseUrl).call('cliStatus', { token: apiKey });
  const data = parseStatus(res.body);
  ctx.out.result({ ...data, ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}) }, () => {
    const p = data.program;
    const r = data.readiness;
    const key = data.key.state === 'marked' ? `marked for rotation, stops working at ${data.key.rotate_by ?? '(deadline not given)'}` : 'active';
    const lines = [
      `Program ${p.id} "${p.name}" (${p.domain})`,
      `  Commission: ${p.commission_type} ${p.commission_rate}; attribution window ${p.attribution_window_days} days; leads: ${p.lead_auth}`,
      `  Key: ${p.api_token_masked ?? '(masked)'} (${key})`,
      `  Server: ${baseUrl}`,
      '',
      r.ready ? 'Integration: ready' : 'Integration: not ready yet',
      ...r.checklist.flatMap((item) => {
        const row = `  [${item.done ? 'x' : ' '}] ${item.label}`;
        return !item.done && item.next_step ? [row, `      → ${item.next_step}`] : [row];
      }),
    ];
    return lines.join('\n') + '\n';
  });
}
