// While the page has lost its node, ask the other nodes (from the last cluster view it had)
// which one is active now: `GET /readyz?role=active` answers 200 only there. The page's CSP
// allows exactly the cluster peers' origins for this, and /readyz answers them CORS (no
// credentials: the probe is open). One round a second, each probe bounded to 1.5 s.
import { useEffect, useState } from 'react';
import { activeProbeUrl, type FollowCandidate, followCandidates } from '@/lib/dashboard/follow-cluster.ts';
import { useCluster, useStreamStatus } from '../data/queries.ts';

const ROUND_MS = 1_000;
const PROBE_TIMEOUT_MS = 1_500;

export type FollowState = { kind: 'idle' } | { kind: 'searching'; asked: readonly string[] } | { kind: 'found'; node: FollowCandidate };

async function isActive(candidate: FollowCandidate): Promise<boolean> {
  try {
    const res = await fetch(activeProbeUrl(window.location.protocol, candidate.httpAddress), {
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return res.status === 200;
  } catch {
    return false; // down, refused, or not answering in time
  }
}

/** Which node to offer while the stream is lost; idle while it is live (or signed out). */
export function useFollowCluster(): FollowState {
  const { phase, needsSignIn } = useStreamStatus();
  const cluster = useCluster();
  const [found, setFound] = useState<FollowCandidate | null>(null);
  const lost = phase === 'disconnected' && !needsSignIn;
  const candidates = followCandidates(cluster);
  const key = candidates.map((c) => `${c.id}@${c.httpAddress}`).join(' ');

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for `candidates` (a new array every render).
  useEffect(() => {
    setFound(null);
    if (!lost || candidates.length === 0) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const round = async () => {
      for (const c of candidates) {
        if (stopped) return;
        if (await isActive(c)) {
          if (!stopped) setFound(c);
          return;
        }
      }
      if (!stopped) timer = setTimeout(() => void round(), ROUND_MS);
    };
    void round();
    return () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    };
  }, [lost, key]);

  if (!lost) return { kind: 'idle' };
  if (found !== null) return { kind: 'found', node: found };
  return { kind: 'searching', asked: candidates.map((c) => c.id) };
}
