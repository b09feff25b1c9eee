// "Export CSV" / "Export JSON" of the audit card: every entry of the filtered range (the whole
// cluster's, as this node keeps it), not only the pages on screen: the export reads every page
// of the range from the server, then saves the file, named for the time of the export.
import { useState } from 'react';
import type { AuditEntry } from '@/lib/ops-api/api-types.ts';
import { type AuditFilter, auditSearch, MAX_AUDIT_LIMIT } from '@/lib/ops-api/audit-filter.ts';
import { auditCsv, auditJson } from '@/lib/dashboard/audit-export.ts';
import { opsApi } from '../data/api-client.ts';
import { buttonClass } from '../ui/button.ts';
import { saveExport } from '../ui/download.ts';

/** Every entry of the range, newest last, without the node-local `seq` (the files keep the API's entry shape). */
async function readRange(filter: AuditFilter): Promise<AuditEntry[]> {
  const pages: AuditEntry[][] = [];
  let before: string | null = null;
  do {
    const page = await opsApi.audit(auditSearch(filter, { limit: MAX_AUDIT_LIMIT, before }));
    pages.unshift(page.entries.map(({ seq: _seq, ...entry }) => entry));
    before = page.older;
  } while (before !== null);
  return pages.flat();
}

export function AuditExport({ filter, disabled }: { filter: AuditFilter; disabled: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const save = async (ext: 'csv' | 'json') => {
    setBusy(true);
    setError(null);
    try {
      const entries = await readRange(filter);
      saveExport('audit', Date.now(), ext, ext === 'csv' ? auditCsv(entries) : auditJson(entries));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="flex items-center gap-1">
      {error !== null && (
        <span role="alert" className="text-xs text-red-700 dark:text-red-300">
          Export failed: {error}
        </span>
      )}
      {(['csv', 'json'] as const).map((ext) => (
        <button
          key={ext}
          type="button"
          data-testid={`audit-export-${ext}`}
          className={buttonClass('ghost', 'px-2 py-0.5 text-xs')}
          disabled={disabled || busy}
          aria-busy={busy}
          title="Every entry of the filtered range"
          onClick={() => void save(ext)}
        >
          {busy ? 'Exporting…' : `Export ${ext.toUpperCase()}`}
        </button>
      ))}
    </div>
  );
}
