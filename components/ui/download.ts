import { exportFileName } from '@/lib/dashboard/table-export.ts';

// Saves text the page built (an export) as a file: a Blob URL on a temporary <a download>, which
// the page's CSP allows (it is a navigation to a download, not a fetch).
export function downloadText(fileName: string, mime: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke after the click has started the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Saves one export of the console (lib/dashboard/table-export.ts) under its file name, with its format's MIME type. */
export function saveExport(what: string, at: number, ext: 'csv' | 'json', text: string): void {
  downloadText(exportFileName(what, at, ext), ext === 'csv' ? 'text/csv;charset=utf-8' : 'application/json', text);
}
