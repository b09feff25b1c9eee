// "Export CSV" / "Export JSON" of the audit card: the entries it shows (the whole cluster's), as
// a file named for the time of the export.
import type { AuditEntry } from '@/lib/ops-api/api-types.ts';
import { auditCsv, auditJson } from '@/lib/dashboard/audit-export.ts';
import { buttonClass } from '../ui/button.ts';
import { saveExport } from '../ui/download.ts';

export function AuditExport({ entries }: { entries: readonly AuditEntry[] }) {
  const disabled = entries.length === 0;
  const save = (ext: 'csv' | 'json') => {
    saveExport('audit', Date.now(), ext, ext === 'csv' ? auditCsv(entries) : auditJson(entries));
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
