import { scriptOptions } from './script-options.js';
import { consent, defaults, getClickId, init, track, trackLead } from './tracker.js';

// Only readable while the script runs for the first time, so captured at load.
const script = document.currentScript as HTMLScriptElement | null;
const w = window as unknown as { Reftrack?: object };

// A second copy of the script (snippet plus tag manager) would send the landing click again and
// race the first for the cookie; the first copy stays in charge.
if (!w.Reftrack) {
  // Assigned by hand rather than through a bundler global name, whose export helpers cost bytes.
  w.Reftrack = { init, consent, getClickId, track, trackLead };
  if (script) {
    // The API lives where the script came from, unless apiBase says otherwise. An inline copy
    // of the script has no src and falls back to the page's origin.
    defaults.apiBase = new URL(script.src, location.href).origin;
    const o = scriptOptions(script.dataset);
    if (!o.manual) init(o);
  }
}
