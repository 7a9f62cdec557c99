/**
 * Checks of success bodies. A server of another version, or something that is not a Reftrack
 * server at all, must fail with a message naming the field, not with "cannot read property of
 * undefined" three calls later.
 */
import type {
  ChainStep,
  CliAuthLogoutResponse,
  CliAuthPollData,
  CliAuthStartResponse,
  CliChainResponse,
  CliInitResponse,
  CliProgramKeyResponse,
  CliProgramsResponse,
  CliStatusResponse,
  CliTestEventResponse,
  Program,
  ReadinessItem,
} from '@reftrack/contract';
import { COMMISSION_TYPES, LEAD_AUTH_MODES, TEST_EVENT_TYPES } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';

type Obj = Record<string, unknown>;

export class ShapeError extends CliError {
  constructor(where: string, path: string, expected: string) {
    super({
      code: CLI_CODES.invalidResponse,
      message: `Unexpected response from ${where}: ${path} should be ${expected}.`,
      exitCode: EXIT.failure,
      hint: 'The server may be of another version than this CLI; update one of them, or check --base-url.',
    });
  }
}

/** A small reader that knows where it is, so every complaint names the field's full path. */
class Reader {
  constructor(
    readonly where: string,
    readonly path: string,
    readonly value: unknown,
  ) {}

  private fail(expected: string): never {
    throw new ShapeError(this.where, this.path, expected);
  }
  at(key: string | number): Reader {
    const obj = this.obj();
    return new Reader(this.where, typeof key === 'number' ? `${this.path}[${key}]` : `${this.path}.${key}`, (obj as Obj)[key as string]);
  }
  obj(): Obj {
    if (typeof this.value !== 'object' || this.value === null || Array.isArray(this.value)) this.fail('an object');
    return this.value as Obj;
  }
  arr(): Reader[] {
    if (!Array.isArray(this.value)) this.fail('an array');
    return (this.value as unknown[]).map((v, i) => new Reader(this.where, `${this.path}[${i}]`, v));
  }
  str(): string {
    if (typeof this.value !== 'string' || this.value === '') this.fail('a non-empty string');
    return this.value as string;
  }
  strOrNull(): string | null {
    if (this.value === null || this.value === undefined) return null;
    if (typeof this.value !== 'string') this.fail('a string or null');
    return this.value as string;
  }
  num(): number {
    if (typeof this.value !== 'number' || !Number.isFinite(this.value)) this.fail('a number');
    return this.value as number;
  }
  int(): number {
    const n = this.num();
    if (!Number.isInteger(n)) this.fail('an integer');
    return n;
  }
  intOrNull(): number | null {
    return this.value === null || this.value === undefined ? null : this.int();
  }
  bool(): boolean {
    if (typeof this.value !== 'boolean') this.fail('true or false');
    return this.value as boolean;
  }
  oneOf<T extends string>(values: readonly T[]): T {
    const s = this.str();
    if (!values.includes(s as T)) this.fail(`one of ${values.join(', ')}`);
    return s as T;
  }
  date(): string {
    const s = this.str();
    if (Number.isNaN(Date.parse(s))) this.fail('an ISO 8601 time');
    return s;
  }
  url(): string {
    const s = this.str();
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      this.fail('a URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') this.fail('an http(s) URL');
    return s;
  }
}

/** `body.data` of a `{success: true, data}` answer. */
function data(where: string, body: unknown): Reader {
  const root = new Reader(where, 'body', body);
  if (root.at('success').value !== true) throw new ShapeError(where, 'body.success', 'true');
  return root.at('data');
}

export function parseAuthStart(body: unknown): CliAuthStartResponse['data'] {
  const d = data('auth/start', body);
  return {
    state: d.at('state').str(),
    login_url: d.at('login_url').url(),
    expires_at: d.at('expires_at').date(),
    // Optional: a server from before the confirmation page sends none.
    ...(typeof (body as { data?: { pairing_code?: unknown } }).data?.pairing_code === 'string' ? { pairing_code: (body as { data: { pairing_code: string } }).data.pairing_code.slice(0, 20) } : {}),
    poll_interval_seconds: (() => {
      const r = d.at('poll_interval_seconds');
      const n = r.num();
      if (n <= 0) throw new ShapeError('auth/start', r.path, 'a positive number');
      return n;
    })(),
  };
}

export function parseAuthPoll(body: unknown): CliAuthPollData {
  const d = data('auth/poll', body);
  const status = d.at('status').oneOf(['pending', 'complete', 'expired'] as const);
  if (status === 'pending') {
    const expires = d.at('expires_at');
    // expires_at on pending is informative only; the deadline was fixed by auth/start.
    return { status, expires_at: expires.value === undefined ? '' : expires.date() };
  }
  if (status === 'expired') return { status };
  const account = d.at('account');
  return { status, token: d.at('token').str(), account: { email: account.at('email').str(), name: account.at('name').strOrNull() } };
}

export function parseLogout(body: unknown): CliAuthLogoutResponse['data'] {
  const d = data('auth/logout', body);
  const revoked = d.at('revoked');
  if (revoked.value !== true) throw new ShapeError(revoked.where, revoked.path, 'true');
  return { revoked: true, revoked_at: d.at('revoked_at').date() };
}

function program(r: Reader): Program & { advertiser_id: number | null } {
  return {
    id: r.at('id').int(),
    name: r.at('name').str(),
    domain: r.at('domain').str(),
    commission_type: r.at('commission_type').oneOf(COMMISSION_TYPES),
    commission_rate: r.at('commission_rate').num(),
    attribution_window_days: r.at('attribution_window_days').int(),
    lead_auth: r.at('lead_auth').oneOf(LEAD_AUTH_MODES),
    api_token_masked: r.at('api_token_masked').strOrNull(),
    advertiser_id: r.at('advertiser_id').intOrNull(),
  };
}

function programWithAdvertiser(r: Reader): Program & { advertiser_id: number } {
  const p = program(r);
  if (p.advertiser_id === null) throw new ShapeError(r.where, `${r.path}.advertiser_id`, 'an integer');
  return { ...p, advertiser_id: p.advertiser_id };
}

const strings = (r: Reader): string[] => r.arr().map((item) => item.str());

export function parseInit(body: unknown): CliInitResponse['data'] {
  const d = data('init', body);
  return { program: programWithAdvertiser(d.at('program')), api_key_instructions: d.at('api_key_instructions').str(), next_steps: strings(d.at('next_steps')) };
}

export function parsePrograms(body: unknown): CliProgramsResponse['data'] {
  return data('programs', body)
    .arr()
    .map((r) => {
      const p = programWithAdvertiser(r);
      // Absent from servers before it existed: left out then, and `keys generate` asks as for a shown key.
      const revealed = r.at('api_key_revealed_at');
      return revealed.value === undefined ? p : { ...p, api_key_revealed_at: revealed.value === null ? null : revealed.date() };
    });
}

export function parseProgramKey(body: unknown): CliProgramKeyResponse['data'] {
  const d = data('programs/:id/key', body);
  const apiKey = d.at('api_key');
  if (!/^\S{16,}$/.test(apiKey.str())) throw new ShapeError(apiKey.where, apiKey.path, 'a program key');
  return {
    program_id: d.at('program_id').int(),
    api_key: apiKey.str(),
    api_token_masked: d.at('api_token_masked').strOrNull(),
    replaced: d.at('replaced').bool(),
    note: d.at('note').str(),
  };
}

const READINESS_KEYS = ['click_seen', 'lead_seen', 'sale_seen', 'test_event_seen', 'processor_connected', 'key_status'] as const;

export function parseStatus(body: unknown): CliStatusResponse['data'] {
  const d = data('status', body);
  const key = d.at('key');
  const readiness = d.at('readiness');
  return {
    program: program(d.at('program')),
    key: { state: key.at('state').oneOf(['active', 'marked'] as const), rotate_by: key.at('rotate_by').strOrNull() },
    readiness: {
      program_id: readiness.at('program_id').int(),
      ready: readiness.at('ready').bool(),
      key_status: readiness.at('key_status').oneOf(['active', 'marked'] as const),
      rotate_by: readiness.at('rotate_by').strOrNull(),
      checklist: readiness
        .at('checklist')
        .arr()
        .map(
          (item): ReadinessItem => ({
            key: item.at('key').oneOf(READINESS_KEYS),
            label: item.at('label').str(),
            done: item.at('done').bool(),
            next_step: item.at('next_step').strOrNull(),
          }),
        ),
    },
  };
}

export function parseTestEvent(body: unknown): CliTestEventResponse['data'] {
  const d = data('test-event', body);
  const out: CliTestEventResponse['data'] = {
    event_type: d.at('event_type').oneOf(TEST_EVENT_TYPES),
    event_id: d.at('event_id').int(),
    test_mode: (() => {
      const r = d.at('test_mode');
      if (r.value !== true) throw new ShapeError(r.where, r.path, 'true');
      return true as const;
    })(),
  };
  const clickId = d.at('click_id').strOrNull();
  const transactionId = d.at('transaction_id').strOrNull();
  if (clickId !== null) out.click_id = clickId;
  if (transactionId !== null) out.transaction_id = transactionId;
  return out;
}

export function parseChain(body: unknown): CliChainResponse['data'] {
  const d = data('test-event chain', body);
  return {
    chain_id: d.at('chain_id').str(),
    passed: d.at('passed').bool(),
    chains_remaining_this_hour: d.at('chains_remaining_this_hour').int(),
    steps: d
      .at('steps')
      .arr()
      .map(
        (s): ChainStep => ({
          step: s.at('step').oneOf(TEST_EVENT_TYPES),
          ok: s.at('ok').bool(),
          status: s.at('status').int(),
          duration_ms: s.at('duration_ms').num(),
          detail: s.at('detail').obj(),
        }),
      ),
  };
}
