// The audit card's filters: action, who, lock, client, node and a time range. Text is applied
// after a short pause in typing (each change asks the server for a new first page).
import { useEffect, useId, useState } from 'react';
import { AUDIT_ACTIONS, type AuditAction } from '@/lib/ops-api/api-types.ts';
import type { AuditFilter } from '@/lib/ops-api/audit-filter.ts';
import { useCluster } from '../data/queries.ts';
import { buttonClass, inputClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';

export interface AuditForm {
  action: AuditAction | '';
  who: string;
  lock: string;
  client: string;
  node: string;
  /** `datetime-local` values (the browser's time zone); "" is open. */
  from: string;
  to: string;
}

export const EMPTY_AUDIT_FORM: AuditForm = { action: '', who: '', lock: '', client: '', node: '', from: '', to: '' };

const TYPING_MS = 300;

function localTime(value: string): number | undefined {
  if (value === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** The filter the form asks for (empty fields ask nothing). */
export function auditFilterFromForm(f: AuditForm): AuditFilter {
  const out: AuditFilter = {};
  if (f.action !== '') out.actions = [f.action];
  for (const key of ['who', 'lock', 'client', 'node'] as const) {
    const v = f[key].trim();
    if (v !== '') out[key] = v;
  }
  const from = localTime(f.from);
  const to = localTime(f.to);
  if (from !== undefined) out.from = from;
  if (to !== undefined) out.to = to;
  return out;
}

function isAction(v: string): v is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(v);
}

/** `onChange` gets the form once typing pauses (at once for selects and times). */
export function AuditFilters({ onChange }: { onChange: (form: AuditForm) => void }) {
  const id = useId();
  const cluster = useCluster();
  const [form, setForm] = useState<AuditForm>(EMPTY_AUDIT_FORM);
  useEffect(() => {
    const timer = setTimeout(() => onChange(form), TYPING_MS);
    return () => clearTimeout(timer);
  }, [form, onChange]);
  const set = (patch: Partial<AuditForm>) => setForm((f) => ({ ...f, ...patch }));
  const label = 'text-xs text-slate-600 dark:text-slate-400';
  const text = (key: 'who' | 'lock' | 'client', title: string, placeholder: string) => (
    <div className="flex min-w-0 flex-col gap-1">
      <label htmlFor={`${id}-${key}`} className={label}>
        {title}
      </label>
      <input
        id={`${id}-${key}`}
        data-testid={`audit-filter-${key}`}
        type="search"
        maxLength={256}
        value={form[key]}
        onChange={(e) => set({ [key]: e.target.value })}
        placeholder={placeholder}
        className={cn(inputClass, 'w-36 max-w-full')}
      />
    </div>
  );
  const nodes = cluster?.nodes.map((n) => n.id) ?? [];
  const changed = JSON.stringify(form) !== JSON.stringify(EMPTY_AUDIT_FORM);
  return (
    <div className="mb-2 flex flex-wrap items-end gap-2" data-testid="audit-filters">
      <div className="flex flex-col gap-1">
        <label htmlFor={`${id}-action`} className={label}>
          Action
        </label>
        <select
          id={`${id}-action`}
          data-testid="audit-filter-action"
          value={form.action}
          onChange={(e) => set({ action: isAction(e.target.value) ? e.target.value : '' })}
          className={inputClass}
        >
          <option value="">All actions</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      {text('who', 'Who', 'bearer:admin…')}
      {text('lock', 'Lock', 'Name contains…')}
      {text('client', 'Client', 'Identity or address…')}
      {nodes.length > 1 && (
        <div className="flex flex-col gap-1">
          <label htmlFor={`${id}-node`} className={label}>
            Node
          </label>
          <select id={`${id}-node`} data-testid="audit-filter-node" value={form.node} onChange={(e) => set({ node: e.target.value })} className={inputClass}>
            <option value="">All nodes</option>
            {nodes.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
      )}
      {(['from', 'to'] as const).map((key) => (
        <div key={key} className="flex flex-col gap-1">
          <label htmlFor={`${id}-${key}`} className={label}>
            {key === 'from' ? 'From' : 'Until'}
          </label>
          <input
            id={`${id}-${key}`}
            data-testid={`audit-filter-${key}`}
            type="datetime-local"
            step={1}
            value={form[key]}
            onChange={(e) => set({ [key]: e.target.value })}
            className={inputClass}
          />
        </div>
      ))}
      {changed && (
        <button type="button" className={buttonClass('ghost', 'py-1 text-xs')} onClick={() => setForm(EMPTY_AUDIT_FORM)}>
          Clear filters
        </button>
      )}
    </div>
  );
}
