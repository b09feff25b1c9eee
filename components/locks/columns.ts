// The lock table's column layout, shared by the header row and every body row.
export const ROW_HEIGHT = 44;

export const GRID_COLUMNS = 'grid grid-cols-[minmax(9rem,2fr)_minmax(11rem,2fr)_minmax(5rem,1fr)_6.5rem_8.5rem_4.5rem_5.5rem] items-center gap-x-3 px-3';

/** The table scrolls sideways below this width instead of squeezing the columns. */
export const TABLE_MIN_WIDTH = 'min-w-[52rem]';

/**
 * At phone width each lock is a card: its name and protocol on the first line, the holder on
 * the second, token, lease left and queue on the third (the cells wrap, the page never scrolls
 * sideways). The virtual list needs the height up front.
 */
export const CARD_HEIGHT = 96;

export const CARD_LAYOUT = 'flex flex-wrap content-center items-center gap-x-3 gap-y-1 px-3';
