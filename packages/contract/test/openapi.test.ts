import { describe, expect, it } from 'vitest';
import { API_OPERATIONS, buildOpenApiDocument, openApiPath, ROUTES } from '../src/index.js';

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
});
