import { describe, expect, it } from 'vitest';
import { API_OPERATIONS, buildOpenApiDocument, INPUT_RULES, OPERATION_REQUESTS, openApiPath, ROUTES } from '../src/index.js';

describe('OpenAPI document', () => {
  it('documents every route of ROUTES with its method', () => {
    const doc = buildOpenApiDocument('https://track.example.com') as { paths: Record<string, Record<string, unknown>> };
    for (const [name, route] of Object.entries(ROUTES)) {
      expect(doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()], name).toBeDefined();
    }
  });

  it('gives every operation a unique operationId and a success answer (a retired route: deprecated)', () => {
    const doc = buildOpenApiDocument('https://track.example.com') as { paths: Record<string, Record<string, { operationId: string; deprecated?: boolean; responses: Record<string, unknown> }>> };
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    expect(operations.length).toBe(API_OPERATIONS.length);
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    for (const o of operations.filter((op) => !op.deprecated)) expect(Object.keys(o.responses).some((s) => Number(s) < 300), o.operationId).toBe(true);
  });

  it('describes requests of operations that exist: a misspelt key would drop a body silently', () => {
    const operations = new Set(API_OPERATIONS.map((o) => `${o.method} ${o.path}`));
    expect(Object.keys(OPERATION_REQUESTS).filter((key) => !operations.has(key))).toEqual([]);
    for (const o of API_OPERATIONS) expect(o.requestBody, `${o.method} ${o.path}`).toBe(OPERATION_REQUESTS[`${o.method} ${o.path}`]?.body);
  });

  it('gives JSON Schema patterns that mean what the server\'s regular expressions mean (Unicode mode, no flags)', () => {
    const patterns = [...Object.values(INPUT_RULES), ...Object.values(INPUT_RULES.payoutDetails)].filter((v): v is RegExp => v instanceof RegExp);
    expect(patterns.length).toBeGreaterThan(10);
    for (const re of patterns) {
      expect(re.flags, re.source).toBe('');
      expect(() => new RegExp(re.source, 'u'), re.source).not.toThrow();
    }
  });
});
