// "Export CSV" / "Export JSON" of the audit card: the entries it shows (the whole cluster's), as
// a file named for the time of the export.
import type { AuditEntry } from '@/lib/ops-api/api-types.ts';
import { auditCsv, auditJson } from '@/lib/dashboard/audit-export.ts';
import { exportFileName } from '@/lib/dashboard/table-export.ts';
import { buttonClass } from '../ui/button.ts';
import { downloadText } from '../ui/download.ts';

export function AuditExport({ entries }: { entries: readonly AuditEntry[] }) {
  const disabled = entries.length === 0;
  const save = (ext: 'csv' | 'json') => {
    const name = exportFileName('audit', Date.now(), ext);
    if (ext === 'csv') downloadText(name, 'text/csv;charset=utf-8', auditCsv(entries));
    else downloadText(name, 'application/json', auditJson(entries));
  };
  return (
    <div className="flex gap-1">
      <button
        type="button"
        data-testid="audit-export-csv"
        className={buttonClass('ghost', 'px-2 py-0.5 text-xs')}
        disabled={disabled}
        onClick={() => save('csv')}
      >
        Export CSV
      </button>
      <button
        type="button"
        data-testid="audit-export-json"
        className={buttonClass('ghost', 'px-2 py-0.5 text-xs')}
        disabled={disabled}
        onClick={() => save('json')}
      >
        Export JSON
      </button>
    </div>
  );
}
