import { memo } from 'react';
import { viewLockName } from '@/lib/dashboard/lock-name-view.ts';
import { cn } from '../ui/cn.ts';

/**
 * A lock name as the dashboard shows it everywhere (table, detail, feed, dialog): characters
 * that would show nothing are drawn as `\u{…}` badges, and a name mixing scripts carries a
 * "mixed" badge naming them, and one made of Cyrillic or Greek look-alikes of Latin letters a
 * "looks Latin" badge, so two different locks never look the same (rule and tests in
 * lib/dashboard/lock-name-view.ts). Plain names render as plain text.
 */
export const LockName = memo(function LockName({ name, className }: { name: string; className?: string }) {
  const view = viewLockName(name);
  if (!view.marked) return <span className={className}>{name}</span>;
  return (
    <span className={className} data-testid="lock-name" data-marked="true" title={view.text}>
      {view.parts.map((part, i) =>
        part.kind === 'text' ? (
          <span key={i}>{part.text}</span>
        ) : (
          <span
            key={i}
            data-testid="name-escape"
            title={`invisible character U+${part.codePoint.toString(16).toUpperCase().padStart(4, '0')}`}
            className="mx-px rounded bg-amber-100 px-0.5 text-[0.85em] text-amber-900 ring-1 ring-amber-400 ring-inset dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-600"
          >
            {part.text}
          </span>
        ),
      )}
      {view.mixedScripts !== null && (
        <span
          data-testid="name-mixed-scripts"
          title={`letters from several scripts: ${view.mixedScripts.join(', ')}`}
          className={cn(
            'ml-1 rounded bg-red-50 px-1 align-middle font-sans text-[0.75em] font-medium text-red-800 ring-1 ring-red-300 ring-inset dark:bg-red-950 dark:text-red-200 dark:ring-red-700',
          )}
        >
          mixed: {view.mixedScripts.join('+')}
        </span>
      )}
      {view.looksLatin !== null && (
        <span
          data-testid="name-looks-latin"
          title={`every letter is ${view.looksLatin}, written like a Latin letter`}
          className="ml-1 rounded bg-red-50 px-1 align-middle font-sans text-[0.75em] font-medium text-red-800 ring-1 ring-red-300 ring-inset dark:bg-red-950 dark:text-red-200 dark:ring-red-700"
        >
          {view.looksLatin}, looks Latin
        </span>
      )}
    </span>
  );
});
