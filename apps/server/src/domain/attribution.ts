/** The attribution window of 3.1: checked until a customer has a recorded conversion. */
const DAY_MS = 86_400_000;

export interface AttributionFacts {
  clickAt: number;
  leadAt: number | null;
  convertedAt: number | null;
  windowDays: number;
  paymentAt: number;
}

export function withinAttributionWindow(f: AttributionFacts): boolean {
  if (f.convertedAt !== null) return true;
  const reference = f.leadAt ?? f.paymentAt;
  return reference - f.clickAt <= f.windowDays * DAY_MS;
}
