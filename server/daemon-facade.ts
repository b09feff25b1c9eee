// The narrow face of the running daemon that in-process code (the ops API's route handlers,
// later bundled by Next with their own module copies) reaches through globalThis. The server
// registers it at start; nothing creates a daemon by importing this file.
import type { LockEngine } from '../lib/engine/lock-engine.ts';

export interface DaemonFacade {
  readonly instanceId: string;
  readonly engine: LockEngine;
  state(): 'starting' | 'serving' | 'draining';
  shutdown(): Promise<void>;
  /**
   * Call after acting on the engine directly (an admin force-release or kick): re-arms the
   * daemon's one timer for the engine's next deadline, which such an action may have moved.
   */
  wake(): void;
}

const KEY = Symbol.for('baton.daemon');
type Holder = { [KEY]?: DaemonFacade };

export function registerDaemonFacade(facade: DaemonFacade): void {
  (globalThis as Holder)[KEY] = facade;
}

export function unregisterDaemonFacade(instanceId: string): void {
  const holder = globalThis as Holder;
  if (holder[KEY]?.instanceId === instanceId) delete holder[KEY];
}

/** The running daemon, or undefined when none is running in this process. */
export function getDaemonFacade(): DaemonFacade | undefined {
  return (globalThis as Holder)[KEY];
}
