import { ActionStatus } from './action-status.tsx';
import { useAuth, useInstanceId } from './data/queries.ts';
import { LiveStatus } from './live-status.tsx';
import { Badge } from './ui/badge.tsx';

/** Title, which node this is, whether the stream is live, who is signed in, and the last action's result. */
export function DashboardHeader() {
  const instanceId = useInstanceId();
  const role = useAuth().data?.role ?? null;
  return (
    <header className="sticky top-0 z-10 border-b border-slate-200 bg-white/95 backdrop-blur dark:border-slate-800 dark:bg-slate-950/95">
      <div className="mx-auto flex max-w-screen-2xl flex-wrap items-center gap-x-4 gap-y-1 px-4 py-2">
        <h1 className="text-lg font-bold">Baton console</h1>
        <LiveStatus />
        {role !== null && <Badge tone={role === 'admin' ? 'info' : 'neutral'}>{role}</Badge>}
        <p className="flex min-w-0 basis-full items-center gap-1 text-sm sm:basis-auto">
          <span className="text-slate-500 dark:text-slate-400">Instance</span>
          <code data-testid="instance-id" className="truncate font-mono">
            {instanceId ?? ''}
          </code>
        </p>
        <ActionStatus className="w-full sm:ml-auto sm:w-auto sm:max-w-[50%] sm:text-right" />
      </div>
    </header>
  );
}
