import { useCallback, useState } from 'react';
import { cn } from '../ui/cn.ts';
import { LockDetailPanel } from './lock-detail.tsx';
import { LockTable } from './lock-table.tsx';

/** The table and, once a lock is chosen, its detail beside it (below it on narrow screens). */
export function LocksSection() {
  const [selected, setSelected] = useState<string | null>(null);
  const onSelect = useCallback((name: string) => setSelected(name), []);
  const onClose = useCallback(() => {
    const name = selected;
    setSelected(null);
    // Give focus back to the row the panel came from, when it is still on screen.
    if (name !== null)
      requestAnimationFrame(() => document.querySelector<HTMLButtonElement>(`[data-testid="lock-row"][data-lock="${CSS.escape(name)}"] button`)?.focus());
  }, [selected]);
  return (
    <section aria-labelledby="locks-heading" className="flex min-w-0 flex-col gap-3">
      <h2 id="locks-heading" tabIndex={-1} className="text-lg font-semibold focus:outline-none">
        Locks
      </h2>
      <div className={cn('grid min-w-0 gap-4', selected !== null && '2xl:grid-cols-[minmax(0,1fr)_28rem]')}>
        <div className="min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-800 dark:bg-slate-900">
          <LockTable selected={selected} onSelect={onSelect} />
        </div>
        {selected !== null && <LockDetailPanel key={selected} name={selected} onClose={onClose} />}
      </div>
    </section>
  );
}
