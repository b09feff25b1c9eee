import { Fragment, memo } from 'react';
import { LockName } from './lock-name.tsx';

/**
 * A client identity ("worker-7@host-3 pid 4121") as the dashboard shows it: each word is drawn
 * by the lock-name rule (invisible characters as badges, mixed scripts marked), so a hostile
 * identity stays text and two different identities never look the same. The single spaces
 * between words are kept; a second space in a row is drawn as a badge too.
 */
export const ClientName = memo(function ClientName({ name }: { name: string }) {
  const words = name.split(' ');
  return (
    <span data-testid="client-name" data-client-name={name}>
      {words.map((word, i) => (
        <Fragment key={i}>
          {i > 0 && ' '}
          {word === '' ? (
            <span
              title="a second space"
              className="mx-px rounded bg-amber-100 px-0.5 text-[0.85em] text-amber-900 ring-1 ring-amber-400 ring-inset dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-600"
            >
              {'\\u{20}'}
            </span>
          ) : (
            <LockName name={word} />
          )}
        </Fragment>
      ))}
    </span>
  );
});
