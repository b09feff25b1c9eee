// The runner's side of the client workers: forks one process per group of clients, collects the
// events they report, knows who holds what right now, and can kill -9 a group (recording that its
// clients hold nothing from then on) and start it again with fresh client names.
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { type ClientEvent, type ClientProtocol, now } from './history.ts';
import type { WorkerConfig, WorkerMessage } from './client-worker.ts';

const WORKER = join(import.meta.dirname, 'client-worker.ts');
const REPO = join(import.meta.dirname, '..');

/** What every worker is told, plus how many workers and clients per worker. */
export interface ClientPoolOptions extends Omit<WorkerConfig, 'group' | 'clients'> {
  groups: number;
  clientsPerGroup: number;
}

interface Group {
  id: string;
  incarnation: number;
  child: ChildProcess | undefined;
  clients: string[];
  exited: Promise<void>;
}

export class ClientPool {
  readonly events: ClientEvent[] = [];
  private readonly groups: Group[] = [];
  /** Client name -> the lock it holds now (as far as its events said). */
  private readonly holding = new Map<string, string>();

  constructor(private readonly options: ClientPoolOptions) {
    for (let g = 0; g < options.groups; g++) this.groups.push({ id: `g${g}`, incarnation: 0, child: undefined, clients: [], exited: Promise.resolve() });
  }

  async start(): Promise<void> {
    await Promise.all(this.groups.map((g) => this.spawn(g)));
  }

  /** Groups that have a client holding a lock now. */
  holdingGroups(): number[] {
    return this.groups.flatMap((g, i) => (g.child !== undefined && g.clients.some((c) => this.holding.has(c)) ? [i] : []));
  }

  /** kill -9 of group `index`; resolves once it is dead. Its clients get a `killed` event. */
  async kill(index: number): Promise<string> {
    const group = this.groups[index];
    if (group?.child === undefined) throw new Error(`client group ${index} is not running`);
    const child = group.child;
    group.child = undefined;
    child.kill('SIGKILL');
    const t = now();
    await group.exited;
    this.markKilled(group, t);
    return `${group.id}#${group.incarnation}`;
  }

  async respawn(index: number): Promise<void> {
    const group = this.groups[index];
    if (group === undefined || group.child !== undefined) throw new Error(`client group ${index} is running`);
    await this.spawn(group);
  }

  /** Asks every worker to finish its current round and exit; kills those still running after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    for (const g of this.groups) g.child?.send({ type: 'stop' });
    const all = Promise.all(this.groups.map((g) => g.exited));
    const late = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), graceMs))]);
    if (late) await this.close();
    for (const g of this.groups) g.child = undefined;
  }

  /** Kills whatever still runs (teardown). */
  async close(): Promise<void> {
    const t = now();
    await Promise.all(
      this.groups.map(async (g) => {
        if (g.child === undefined || g.child.exitCode !== null || g.child.signalCode !== null) return;
        g.child.kill('SIGKILL');
        await g.exited;
        this.markKilled(g, t);
      }),
    );
  }

  /**
   * Records a `killed` event for each of the group's clients, stamped `t` (taken just after
   * kill()) or, if later, the latest event the dying process stamped before it died (a grant
   * microseconds after `t` would otherwise open a hold that nothing closes). Called once it has
   * exited, when all its IPC messages are in.
   */
  private markKilled(group: Group, t: number): void {
    const clients = new Set(group.clients);
    let killedAt = t;
    for (const e of this.events) if (clients.has(e.client) && e.t > killedAt) killedAt = e.t;
    for (const client of group.clients) {
      this.events.push({ kind: 'killed', t: killedAt, client });
      this.holding.delete(client);
    }
  }

  private spawn(group: Group): Promise<void> {
    group.incarnation++;
    const base = this.groups.indexOf(group) * this.options.clientsPerGroup;
    const clients = Array.from({ length: this.options.clientsPerGroup }, (_, i) => {
      const protocol: ClientProtocol = (base + i) % 2 === 0 ? 'keyed' : 'session';
      return { name: `${group.id}.${protocol === 'keyed' ? 'k' : 's'}${i}#${group.incarnation}`, protocol };
    });
    group.clients = clients.map((c) => c.name);
    const config: WorkerConfig = {
      group: group.id,
      clients,
      lockAddresses: this.options.lockAddresses,
      sessionAddresses: this.options.sessionAddresses,
      resourceUrl: this.options.resourceUrl,
      locks: this.options.locks,
      leaseMs: this.options.leaseMs,
      waitMs: this.options.waitMs,
      seed: this.options.seed * 1_000 + this.groups.indexOf(group) * 10 + group.incarnation,
      ...(this.options.longSessionHolds === true ? { longSessionHolds: true } : {}),
    };
    const child = fork(WORKER, [], {
      cwd: REPO,
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, CHAOS_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    group.child = child;
    // 'close', not 'exit': by then every IPC message it sent has been read.
    group.exited = new Promise((resolve) => child.once('close', () => resolve()));
    return new Promise<void>((resolve, reject) => {
      const failed = () => reject(new Error(`client worker ${group.id} exited before it was ready`));
      child.once('exit', failed);
      child.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          child.off('exit', failed);
          resolve();
        } else if (message.type === 'event') {
          this.record(message.event);
        }
      });
    });
  }

  private record(event: ClientEvent): void {
    this.events.push(event);
    if (event.kind === 'grant') this.holding.set(event.client, event.lock);
    else if (event.kind === 'release' || event.kind === 'lost') this.holding.delete(event.client);
  }
}
