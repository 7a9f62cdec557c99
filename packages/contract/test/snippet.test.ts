import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRACKER_SCRIPT_PATH, TRACKER_SCRIPT_PINNED_PATH, trackerSnippet } from '../src/index.js';

const docs = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

describe('the tracker tag: one form everywhere', () => {
  it('is the deferred /tracker.js tag with the program id', () => {
    expect(trackerSnippet('https://track.example.com', 42)).toBe('<script src="https://track.example.com/tracker.js" data-reftrack-program-id="42" defer></script>');
    expect(TRACKER_SCRIPT_PATH).toBe('/tracker.js');
    expect(TRACKER_SCRIPT_PINNED_PATH).toBe('/tracker/v1.js');
  });

  it('docs/tracker.md shows that tag in "The snippet", and /tracker/v1.js only as the alias', () => {
    const text = docs('tracker.md');
    const section = text.slice(text.indexOf('## The snippet'), text.indexOf('## Options'));
    expect(section).toContain(trackerSnippet('https://track.example.com', 42));
    for (const tag of text.match(/<script[^>]*src="[^"]*"[^>]*>/g) ?? []) {
      expect(tag, tag).toContain(`${TRACKER_SCRIPT_PATH}"`);
      expect(tag, tag).not.toMatch(/\basync\b/);
    }
    expect(text).toMatch(/`\/tracker\/v1\.js` serves the\s+same bundle as an alias/);
  });

  it('the dashboard and CLI guides show the same tag', () => {
    const form = /^<script src="[^"]+\/tracker\.js" data-reftrack-program-id="[^"]+" defer><\/script>$/;
    for (const name of ['dashboard.md', 'cli.md', 'quickstart.md']) {
      for (const tag of docs(name).match(/<script[^>]*src="[^"]*"[^>]*><\/script>/g) ?? []) expect(tag, `${name}: ${tag}`).toMatch(form);
    }
  });
});
