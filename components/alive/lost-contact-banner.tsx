// The page's own node is gone (its stream errored, or sent nothing for 2 s): say so where nobody
// can miss it, with the time of the last data, and offer the node that is active now. The
// switch goes by itself after a visible countdown unless the operator cancels it.
import { useEffect, useState } from 'react';
import { formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import { AUTO_SWITCH_MS, switchUrl } from '@/lib/dashboard/follow-cluster.ts';
import { useCluster, useStreamStatus } from '../data/queries.ts';
import { PAGE_BEAT_MS, useNow } from '../data/use-now.ts';
import { buttonClass } from '../ui/button.ts';
import { type FollowState, useFollowCluster } from './use-follow-cluster.ts';

function go(httpAddress: string): void {
  window.location.assign(switchUrl(window.location.protocol, httpAddress, window.location.search, window.location.hash));
}

function SwitchOffer({ follow }: { follow: Extract<FollowState, { kind: 'found' }> }) {
  const now = useNow(PAGE_BEAT_MS);
  const { id, httpAddress } = follow.node;
  const [deadline, setDeadline] = useState<number | null>(null);
  const [cancelled, setCancelled] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new node found starts a new countdown.
  useEffect(() => {
    setCancelled(false);
    setDeadline(performance.now() + AUTO_SWITCH_MS);
  }, [id, httpAddress]);
  const left = deadline === null ? AUTO_SWITCH_MS : Math.max(0, deadline - now);
  useEffect(() => {
    if (!cancelled && deadline !== null && left === 0) go(httpAddress);
  }, [cancelled, deadline, left, httpAddress]);
  return (
    <div className="flex flex-col gap-2">
      <p>
        Node <span className="font-mono font-semibold">{id}</span> is the active node now ({httpAddress}).{' '}
        {cancelled ? 'Automatic switch cancelled.' : <span data-testid="switch-countdown">Switching to its console in {Math.ceil(left / 1_000)} s.</span>}{' '}
        Sign-ins are per node: its console may ask you to sign in.
      </p>
      <div className="flex flex-wrap gap-2">
        <button type="button" data-testid="switch-node" className={buttonClass('primary')} onClick={() => go(httpAddress)}>
          Switch to {id} (active)
        </button>
        {!cancelled && (
          <button type="button" data-testid="switch-cancel" className={buttonClass('secondary')} onClick={() => setCancelled(true)}>
            Stay on this page
          </button>
        )}
      </div>
    </div>
  );
}

export function LostContactBanner() {
  const { phase, needsSignIn, lastData } = useStreamStatus();
  const cluster = useCluster();
  const follow = useFollowCluster();
  const now = useNow(1_000);
  if (phase !== 'disconnected' || needsSignIn || lastData === undefined) return null;
  const node = cluster?.self ?? 'this node';
  const agoS = Math.max(0, Math.floor((now - lastData.mono) / 1_000));
  return (
    <section
      data-testid="lost-contact"
      data-live-banner=""
      // When the page saw the loss (performance.now()): tests measure detection on the page's own clock.
      data-lost-at={Math.round(lastData.lostAt)}
      aria-label="Connection lost"
      className="flex flex-col gap-2 rounded-md border-2 border-red-600 bg-red-50 px-3 py-2 text-sm text-red-950 dark:border-red-500 dark:bg-red-950 dark:text-red-50"
    >
      <p className="text-base">
        {/* Announced once; the age next to it ticks without being read out again. */}
        <strong role="alert" className="font-semibold">
          Lost contact with node <span className="font-mono">{node}</span> at {formatClockTime(lastData.wall)}
        </strong>{' '}
        <span data-testid="lost-contact-age">(last data {agoS} s ago)</span>
      </p>
      <p>What this page shows is as of then: countdowns are stopped and actions are off until the node answers again.</p>
      {follow.kind === 'found' ? (
        <SwitchOffer follow={follow} />
      ) : follow.kind === 'searching' && follow.asked.length > 0 ? (
        <p data-testid="follow-searching">Looking for the active node among {follow.asked.join(', ')}…</p>
      ) : null}
    </section>
  );
}
