// What the history checker reports: one broken property with the evidence in words. Its own
// module because the per-property checkers (mutual-exclusion.ts, token-order.ts) produce them
// and the checker that runs them (history-checker.ts) collects them: neither imports the other.

export type Property = 'fencing' | 'token-unique' | 'mutual-exclusion' | 'token-succession' | 'stranded' | 'final-state' | 'token-order' | 'session-carryover';

export interface Violation {
  property: Property;
  message: string;
}
