export { consent, getClickId, init, track, trackLead } from './tracker.js';
export type { LeadFailure, LeadInput, LeadResult, Options, TrackerError } from './tracker.js';
