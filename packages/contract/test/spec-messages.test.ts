/**
 * Every message the interface specification fixes is in the error catalogue, verbatim. The test
 * reads the spec itself (a copy kept beside the contract, checked against the shared original when
 * that is present), so a one-word change in the catalogue fails here even where the other suites
 * compare answers with the catalogue.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BRAND, ERRORS } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SPEC_COPY = path.join(here, '..', 'spec', 'interface-spec.md');
const SPEC_SHARED = path.join(here, '..', '..', '..', '..', 'shared', 'spec', 'interface-spec.md');
const spec = fs.readFileSync(SPEC_COPY, 'utf8');

/** The text of the section whose heading starts with `### <number>` (up to the next heading). */
function section(number: string): string {
  const start = spec.indexOf(`### ${number} `);
  if (start < 0) throw new Error(`spec section ${number} not found`);
  const rest = spec.slice(start + 4);
  const end = rest.search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end);
}

/** Cell `index` of every table row of a section (header and divider rows left out). */
function column(text: string, index: number): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) => line.split('|')[index + 1]?.trim() ?? '');
}

/**
 * The backticked messages of a piece of spec text. The spec nests `` `<cli> login` `` — a literal
 * pair of backticks inside the message — in the backticked message; those inner backticks are
 * kept apart while the outer ones are read. Only spans with a space are messages (the others are
 * codes and field names such as `link_disabled` or `details.code`). A message the spec follows with
 * "plus …" is the start of the catalogue's message.
 */
function messages(text: string): Array<{ message: string; prefix: boolean }> {
  const INNER = '\u0000';
  const flat = text.replace(/`<cli> login`/g, `${INNER}<cli> login${INNER}`);
  return [...flat.matchAll(/`([^`]+)`( plus )?/g)]
    .map((m) => ({ message: m[1].replaceAll(INNER, '`'), prefix: m[2] !== undefined }))
    .filter(({ message }) => message.includes(' ') && message.trim() === message);
}

/** The spec's placeholders in the catalogue's notation. */
function asTemplate(message: string): string {
  return message
    .replace(/<cli>/g, BRAND.cli)
    .replace('<status>', '{status}')
    .replace('(request_id: <id>)', '(request_id: {request_id})')
    .replace(/: <value>\./, ': {value}.')
    .replace('currency XXX', 'currency {currency}');
}

/** All of part 7, from its heading to part 8's. */
function part7(): string {
  const start = spec.indexOf('\n## 7. ');
  const end = spec.indexOf('\n## 8. ');
  if (start < 0 || end < start) throw new Error('spec part 7 not found');
  return spec.slice(start, end);
}

/** A backticked body or field literal (`{error: {code, message, ...}}`, `success: false`), not a message. */
const isBodyLiteral = (span: string): boolean => span.startsWith('{') || /^\w+: (true|false)$/.test(span);

const CATALOGUE = Object.values(ERRORS).map((e) => e.message);

/** True when the catalogue holds the message verbatim; `Invalid API key. ...` is abbreviated in the spec. */
function inCatalogue({ message, prefix }: { message: string; prefix: boolean }): boolean {
  const template = asTemplate(message);
  if (template.endsWith('. ...')) return CATALOGUE.some((m) => m.startsWith(template.slice(0, -3)));
  if (prefix) return CATALOGUE.some((m) => m === template || m.startsWith(`${template} `));
  return CATALOGUE.includes(template);
}

const FIXED: Array<[string, Array<{ message: string; prefix: boolean }>]> = [
  ['5.3 header parsing', [...column(section('5.3'), 2).flatMap(messages), ...messages(section('5.3').split('\n').find((l) => l.startsWith('Readiness gives'))!)]],
  ['7.2 status meanings', column(section('7.2'), 1).flatMap(messages)],
  ['7.3 click', messages(section('7.3'))],
  ['7.4 lead', messages(section('7.4'))],
  ['7.5 sale, refund, other', column(section('7.5'), 1).flatMap(messages)],
  ['7.6 CLI', column(section('7.6'), 2).flatMap(messages)],
];

describe('the spec copy', () => {
  it('is the shared specification, word for word (when the shared copy is on this machine)', () => {
    if (!fs.existsSync(SPEC_SHARED)) return;
    expect(spec).toBe(fs.readFileSync(SPEC_SHARED, 'utf8'));
  });
});

describe('part 7: every message of the spec is in the error catalogue verbatim', () => {
  for (const [name, found] of FIXED) {
    it(`${name}: all ${found.length} messages`, () => {
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((m) => !inCatalogue(m)).map((m) => m.message)).toEqual([]);
    });
  }

  it('the extraction finds the messages it must (so that an empty parse cannot pass)', () => {
    const all = FIXED.flatMap(([, m]) => m.map((x) => x.message));
    expect(all).toContain('Customer status cannot be updated to lead. Current status: <status>');
    expect(all).toContain('Authentication required — run `<cli> login` first');
    expect(all).toContain('Missing API token.');
    expect(all).toContain('provider must be one of: ...');
    expect(all.length).toBeGreaterThanOrEqual(55);
  });

  it('no message of part 7 escapes the tables above: every one anywhere in 7.1-7.7 is among those checked', () => {
    const checked = new Set(FIXED.flatMap(([, m]) => m.map((x) => x.message)));
    const everywhere = messages(part7()).filter(({ message }) => !isBodyLiteral(message));
    expect(everywhere.length).toBeGreaterThanOrEqual(60);
    expect(everywhere.filter(({ message }) => !checked.has(message)).map((m) => m.message)).toEqual([]);
  });
});
