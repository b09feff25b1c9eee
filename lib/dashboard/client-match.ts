// How the dashboard names the client of a bulk release: by the identity the holder gave, or by
// its address when it gave none, and always saying which. An identity is chosen by the client
// and may read as another client's address ("127.0.0.1:5312"): the confirm dialog and the
// status line must not let the one pass for the other (issue 26).
import type { ClientMatchKind } from '../ops-api/client-release-types.ts';

export interface ClientMatchView {
  by: ClientMatchKind;
  value: string;
}

/** The match for a holder: its identity when it gave one, else its address. */
export function holderMatch(holder: { client: string; clientName: string | null }): ClientMatchView {
  return holder.clientName === null ? { by: 'address', value: holder.client } : { by: 'identity', value: holder.clientName };
}

/** The words before the value in the dialog's title and the status line: "identity" or "address". */
export function clientMatchKindText(by: ClientMatchKind): string {
  return by === 'identity' ? 'identity' : 'address';
}

/** "identity worker-7@host-3" or "address 127.0.0.1:5312", as the audit writes it too. */
export function clientMatchText(match: ClientMatchView): string {
  return `${clientMatchKindText(match.by)} ${match.value}`;
}

/** The query string of GET /api/v1/clients/held for a match. */
export function clientHeldQuery(match: ClientMatchView): string {
  return `${match.by}=${encodeURIComponent(match.value)}`;
}
