import { useCluster } from '../data/queries.ts';

/**
 * On a node that is not the active one: actions taken on this page are forwarded to the
 * active node, and while none is known they fail. Not shown on the active node or a single node.
 */
export function StandbyBanner() {
  const cluster = useCluster();
  if (cluster === undefined || cluster.active === cluster.self) return null;
  const noActive = cluster.active === null;
  return (
    <p
      data-testid="standby-banner"
      className={
        noActive
          ? 'rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-700 dark:bg-red-950 dark:text-red-100'
          : 'rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100'
      }
    >
      <strong className="font-semibold">{cluster.phase}</strong>
      {noActive ? (
        <> — no active node: actions cannot be carried out until one is known.</>
      ) : (
        <>
          {' '}
          — actions are forwarded to the active node <span className="font-mono font-semibold">{cluster.active}</span>.
        </>
      )}
    </p>
  );
}
