import type { ReactNode } from 'react';
import { cn } from './cn.ts';

/** A bordered panel with a heading; `headingLevel` keeps the page outline sensible. */
export function Card({
  title,
  headingLevel = 3,
  actions,
  className,
  children,
  id,
  ...rest
}: {
  title: ReactNode;
  headingLevel?: 2 | 3;
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
  id?: string;
  'data-testid'?: string;
}) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const headingId = id === undefined ? undefined : `${id}-heading`;
  return (
    <section
      id={id}
      aria-labelledby={headingId}
      className={cn('min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-800 dark:bg-slate-900', className)}
      {...rest}
    >
      <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
        <Heading id={headingId} className="text-sm font-semibold tracking-wide text-slate-700 uppercase dark:text-slate-300">
          {title}
        </Heading>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** The placeholder inside a card until the first snapshot arrives. */
export function Waiting() {
  return <p className="text-sm text-slate-500 dark:text-slate-400">Waiting for data…</p>;
}
