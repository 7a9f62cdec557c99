import { BRAND } from '@reftrack/contract';
import { describe, expect, it } from 'vitest';
import { scriptOptions } from '../src/script-options.js';

/** What the DOM puts in `dataset` for a `data-*` attribute name. */
const datasetKey = (attribute: string) => attribute.slice(5).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

describe('scriptOptions', () => {
  it('reads the program id from the contract attribute', () => {
    expect(scriptOptions({ [datasetKey(BRAND.scriptProgramAttribute)]: '7' })).toEqual({ programId: '7' });
  });

  it('maps every data-reftrack-* attribute to its option; a bare attribute means true', () => {
    const dataset = {
      [datasetKey('data-reftrack-api-base')]: 'https://api.shop.test',
      [datasetKey('data-reftrack-cookie-domain')]: '.shop.test',
      [datasetKey('data-reftrack-require-consent')]: '',
      [datasetKey('data-reftrack-debug')]: '',
      [datasetKey('data-reftrack-manual')]: '',
    };
    expect(scriptOptions(dataset)).toEqual({
      apiBase: 'https://api.shop.test',
      cookieDomain: '.shop.test',
      requireConsent: true,
      debug: true,
      manual: true,
    });
  });

  it("ignores other scripts' data attributes", () => {
    expect(scriptOptions({ cfasync: 'false', reftrack: 'x', analyticsDebug: '' })).toEqual({});
  });
});
