// The etcd3 client the coordination code uses: every call runs once on one host, with no retry
// and no circuit breaker. etcd3's defaults retry a failed call three times and shut a host out for
// 5 s after three failures; the holder and the reserver have their own timing (a keep-alive round
// is judged by when it was sent, a lost compare-and-swap re-reads), and a breaker still open after
// quorum came back would only delay their recovery. (cockatiel is etcd3's own dependency; if this
// code ships in `baton serve`, etcd3 and cockatiel move to package.json's dependencies.)
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';

export function etcdClient(endpoints: readonly string[]): Etcd3 {
  return new Etcd3({ hosts: [...endpoints], faultHandling: { host: () => noop, global: noop } });
}
