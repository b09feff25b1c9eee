// Whether a standby announces at once that the active it follows went silent: a pure rule over
// what it follows, whether it still hears it, and whom it last announced.
//
// Why this rule. A node's status says whom it hears. The other standbys wait while a peer still
// follows a live active (role-decider.ts), so a standby that stops hearing its active sends its
// status at once rather than at its next heartbeat: the others need not wait a heartbeat longer
// to promote. It says so once per silent active (a later heartbeat repeats it anyway).

export interface LossAnnounceInput {
  /** The peer this node follows; null when none. */
  following: string | null;
  /** Whether that peer was heard within the peer timeout (false when none is followed). */
  followingAlive: boolean;
  /** The followed peer whose silence this node already announced; null when none. */
  announcedFor: string | null;
}

/** The silent active to announce now (then remember it as announced), or null for nothing to say. */
export function lossToAnnounce(i: LossAnnounceInput): string | null {
  if (i.following === null || i.followingAlive || i.announcedFor === i.following) return null;
  return i.following;
}
