import type { LockRow } from '@/lib/dashboard/dashboard-state.ts';
import { locksToCsv, locksToJson } from '@/lib/dashboard/lock-export.ts';
import { buttonClass } from '../ui/button.ts';
import { saveExport } from '../ui/download.ts';

/**
 * Saves the rows the table shows (after search and filters, in its order) as JSON or CSV; not
 * while the table is still loading (the rows would not be all of them).
 */
export function LockExportButtons({ rows, loading = false }: { rows: readonly LockRow[]; loading?: boolean }) {
  const off = rows.length === 0 || loading;
  const title = loading ? 'The table is still loading' : undefined;
  const save = (ext: 'csv' | 'json') => {
    const now = performance.now();
    const at = Date.now();
    saveExport('locks', at, ext, ext === 'csv' ? locksToCsv(rows, now) : locksToJson(rows, now, at, window.location.search));
  };
  return (
    // A named group: the page has other "Export CSV" buttons (a lock's history, the audit).
    <div className="flex gap-2" role="group" aria-label="Export the lock table" data-testid="lock-export">
      <button type="button" className={buttonClass('secondary', 'py-1')} disabled={off} title={title} onClick={() => save('json')}>
        Export JSON
      </button>
      <button type="button" className={buttonClass('secondary', 'py-1')} disabled={off} title={title} onClick={() => save('csv')}>
        Export CSV
      </button>
    </div>
  );
}
