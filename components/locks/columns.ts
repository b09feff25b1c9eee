// The lock table's column layout, shared by the header row and every body row.
export const ROW_HEIGHT = 44;

export const GRID_COLUMNS = 'grid grid-cols-[minmax(9rem,2fr)_minmax(11rem,2fr)_minmax(5rem,1fr)_6.5rem_6.5rem_4.5rem_5.5rem] items-center gap-x-3 px-3';

/** The table scrolls sideways below this width instead of squeezing the columns. */
export const TABLE_MIN_WIDTH = 'min-w-[50rem]';
