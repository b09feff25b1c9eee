import type { ReactNode } from 'react';
import { type ClientMatchView, clientMatchText } from '@/lib/dashboard/client-match.ts';
import { parseViewParams } from '@/lib/dashboard/view-params.ts';
import { writeView } from '../data/use-view-params.ts';
import { cn } from '../ui/cn.ts';

/** Opens the client view for `match` (a new history entry: Back returns to where the operator was). */
export function openClientView(match: ClientMatchView): void {
  writeView({ ...parseViewParams(window.location.search), client: match, lock: null }, 'push');
}

/**
 * A client identity (or address) that opens the client view: everything that client holds and
 * waits for. Writes the URL directly rather than subscribing to it, so a table of these does
 * not re-render on every change of the view. Inside a clickable row it keeps the click to itself.
 */
export function ClientLink({ match, children, className }: { match: ClientMatchView; children: ReactNode; className?: string }) {
  return (
    <button
      type="button"
      data-testid="client-link"
      data-client={match.value}
      data-by={match.by}
      title={`Everything ${clientMatchText(match)} holds and waits for`}
      onClick={(e) => {
        e.stopPropagation();
        openClientView(match);
      }}
      className={cn(
        'max-w-full rounded text-left underline decoration-slate-300 decoration-dotted underline-offset-2 hover:text-sky-800 hover:decoration-solid focus-visible:outline-2 focus-visible:outline-sky-500 dark:decoration-slate-600 dark:hover:text-sky-300',
        className,
      )}
    >
      {children}
    </button>
  );
}
