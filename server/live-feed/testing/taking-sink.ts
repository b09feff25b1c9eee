// A stream reader that takes every frame at once and never has anything queued: the snapshot
// pass and the event hub's tests use it where the reader's speed is not what they test.
import type { FeedSubscriber } from '../../../lib/ops-api/daemon-facade.ts';

export class TakingSink implements FeedSubscriber {
  readonly frames: Uint8Array[] = [];
  send(frame: Uint8Array): boolean {
    this.frames.push(frame);
    return true;
  }
  queuedBytes(): number {
    return 0;
  }
  takenBytes(): number {
    return 0;
  }
  close(): void {}
}
