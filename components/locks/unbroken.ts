// How the lock detail and its dialogs draw a token, an address or a client identity: never
// broken mid-word (a token split over two lines reads as two numbers, an identity split inside
// a word as another client). Each element that uses these carries the whole value in its title.

/** A token or an address: one line, ending in an ellipsis when the box is too narrow. */
export const ONE_LINE = 'min-w-0 truncate font-mono';

/**
 * A client identity (a <ClientName>): it wraps only between its words; a single word longer
 * than the line ends in an ellipsis instead of breaking.
 */
export const WORD_WRAPPED =
  'min-w-0 font-mono [&_[data-testid=client-name]>span]:inline-block [&_[data-testid=client-name]>span]:max-w-full [&_[data-testid=client-name]>span]:truncate [&_[data-testid=client-name]>span]:align-bottom';
