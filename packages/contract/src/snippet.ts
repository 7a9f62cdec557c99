/**
 * The tracker tag. The dashboard, `reftrack init`, the CLI's init answer and docs/tracker.md all
 * show this one form (a test holds the docs to it), so a person never has to choose between two.
 */
import { BRAND } from './brand.js';

/** The tag's script path: always the newest build of the bundle (cached five minutes). */
export const TRACKER_SCRIPT_PATH = '/tracker.js';

/** An alias of the same bundle pinned to major version 1 (cached a year); kept for tags that use it. */
export const TRACKER_SCRIPT_PINNED_PATH = '/tracker/v1.js';

/**
 * `<script src="{origin}/tracker.js" data-reftrack-program-id="{id}" defer></script>`: `defer`
 * loads it without blocking the page and runs it once the document is parsed, before
 * DOMContentLoaded, which is early enough to record the landing click.
 */
export function trackerSnippet(origin: string, programId: number | string): string {
  return `<script src="${origin}${TRACKER_SCRIPT_PATH}" ${BRAND.scriptProgramAttribute}="${programId}" defer></script>`;
}
