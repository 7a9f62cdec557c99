import { afterEach, describe, expect, it, vi } from 'vitest';
import { BRAND, ERRORS, formatMessage } from '@reftrack/contract';
import type { RotationWarning } from '@reftrack/contract';
import { KeyRotationRequiredError, Reftrack, type ReftrackWarning } from '../src/index.js';
import { resetWarnOncePerProcess } from '../src/warnings.js';
import { startScriptedServer, typedError, type ScriptedServer } from './helpers/scripted-server.js';

const DEADLINE = '2030-06-01T00:00:00.000Z';
const ROTATION_HEADERS = {
  deprecation: '@1780000000',
  sunset: new Date(DEADLINE).toUTCString(),
  link: '<http://reftrack.test/docs/errors#api_key_rotation_required>; rel="deprecation"',
};
const WARNING: RotationWarning = {
  code: 'api_key_rotation_required',
  message: formatMessage(ERRORS.keyRotationWarning.message, { deadline: DEADLINE }),
  hint: ERRORS.keyRotationWarning.hint ?? '',
  rotate_by: DEADLINE,
  docs_url: 'http://reftrack.test/docs/errors#api_key_rotation_required',
};
const TEST_SALE = { test_mode: true, sale_id: 1, transaction_id: 'test_txn_1' };

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  resetWarnOncePerProcess();
  vi.restoreAllMocks();
});

describe('rotation warnings', () => {
  it('hands each body warning and the headers to onWarning, and returns them on the result', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: TEST_SALE, warnings: [WARNING] }, headers: ROTATION_HEADERS }]);
    const seen: ReftrackWarning[] = [];
    const result = await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: (w) => seen.push(w) }).sendTestSale();
    expect(result.warnings).toEqual([WARNING]);
    expect(seen).toEqual([
      {
        code: 'api_key_rotation_required',
        message: WARNING.message,
        hint: WARNING.hint,
        rotateBy: DEADLINE,
        docsUrl: WARNING.docs_url,
        deprecation: ROTATION_HEADERS.deprecation,
        sunset: ROTATION_HEADERS.sunset,
        link: ROTATION_HEADERS.link,
        requestId: 'req_1',
        raw: WARNING,
      },
    ]);
  });

  it('makes a warning from Deprecation/Sunset headers alone', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: TEST_SALE }, headers: ROTATION_HEADERS }]);
    const seen: ReftrackWarning[] = [];
    await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: (w) => seen.push(w) }).sendTestSale();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ rotateBy: DEADLINE, docsUrl: 'http://reftrack.test/docs/errors#api_key_rotation_required', raw: null });
    expect(seen[0].message).toBe(formatMessage(ERRORS.keyRotationWarning.message, { deadline: DEADLINE }));
  });

  it('still tells onWarning when the retired key is refused', async () => {
    const body = typedError(ERRORS.keyRotationRequired, { deadline: DEADLINE }, { hint: ERRORS.keyRotationRequired.hint, docs_url: WARNING.docs_url });
    server = await startScriptedServer([{ status: 401, body, headers: ROTATION_HEADERS }]);
    const seen: ReftrackWarning[] = [];
    const error = await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: (w) => seen.push(w) }).readiness().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyRotationRequiredError);
    expect(seen).toHaveLength(1);
    expect(seen[0].message).toBe(body.error.message);
  });

  it('stays silent for responses without rotation notices', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: TEST_SALE } }]);
    const onWarning = vi.fn();
    await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning }).sendTestSale();
    expect(onWarning).not.toHaveBeenCalled();
  });

  it('by default prints one console warning per process', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: TEST_SALE, warnings: [WARNING] }, headers: ROTATION_HEADERS }]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url }).sendTestSale();
    await new Reftrack({ apiKey: 'aff_k', baseUrl: server.url }).sendTestSale();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0]).startsWith(BRAND.debugPrefix)).toBe(true);
    expect(String(warn.mock.calls[0][0])).toContain(DEADLINE);
  });

  it('a throwing onWarning does not fail the call', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: TEST_SALE, warnings: [WARNING] } }]);
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const result = await new Reftrack({
      apiKey: 'aff_k',
      baseUrl: server.url,
      onWarning: () => {
        throw new Error('logger down');
      },
    }).sendTestSale();
    expect(result.data).toEqual(TEST_SALE);
  });
});
