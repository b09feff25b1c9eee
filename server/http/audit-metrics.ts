// The audit log's health on /metrics (issue 26): a failed write used to leave only one line on
// stderr. Alert on `baton_audit_unwritable == 1` (or pending entries that do not go down): the
// admin actions of that time are in memory only until the file takes them again.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AuditHealth } from '../../lib/ops-api/daemon-facade.ts';

export function registerAuditMetrics(registry: Registry, health: () => AuditHealth): void {
  new Gauge({
    name: 'baton_audit_unwritable',
    help: 'Whether the last write to the audit file failed (1): entries wait in memory and are retried every second',
    registers: [registry],
    collect() {
      this.set(health().file === 'unwritable' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'baton_audit_pending_entries',
    help: 'Audit entries recorded and not in the audit file yet',
    registers: [registry],
    collect() {
      this.set(health().pending);
    },
  });
  new Counter({
    name: 'baton_audit_dropped_entries_total',
    help: 'Audit entries never written to the file: over 4 MiB waited for it',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(health().dropped);
    },
  });
}
