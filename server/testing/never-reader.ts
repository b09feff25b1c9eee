// The slowloris reader of the socket tests (server/lines/slowloris.test.ts, server/lines/fuzz-memory.test.ts):
// a client that asks for answers and never reads them, so the server's answers pile up until
// its io-timeout cuts the client off. Its own writes respect backpressure: written blindly
// every few milliseconds, they buffered hundreds of MB in the test worker.
import { connect, type Socket } from 'node:net';
import { sleep } from './fuzz-helpers.ts';

/**
 * Bytes queued in this client at most: far more than both kernels' socket buffers and the
 * server's read buffer hold, so the server is never short of requests to answer.
 */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export class NeverReader {
  closed = false;

  private constructor(private readonly socket: Socket) {
    // A reset is how a client that does not read learns of the cut; 'close' follows.
    socket.on('error', () => {});
    socket.on('close', () => (this.closed = true));
  }

  /** Connects, sends `first` and waits for its one-line answer (a grant to hold), then stops reading. */
  static async open(port: number, first?: string): Promise<NeverReader> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
      s.once('error', reject);
    });
    if (first !== undefined) {
      await new Promise<void>((resolve, reject) => {
        let got = '';
        const onData = (b: Buffer): void => {
          got += b.toString('latin1');
          if (!got.includes('\n')) return;
          socket.off('data', onData);
          resolve();
        };
        socket.on('data', onData).once('close', () => reject(new Error(`closed before answering ${JSON.stringify(first)}: ${JSON.stringify(got)}`)));
        socket.write(first);
      });
    }
    socket.pause();
    return new NeverReader(socket);
  }

  /** Writes `requests` over and over, only while under MAX_QUEUED_BYTES, until the server cuts the client off or `ms` pass. */
  async flood(requests: string, ms: number): Promise<void> {
    const bytes = Buffer.from(requests);
    const deadline = performance.now() + ms;
    while (!this.closed && performance.now() < deadline) {
      if (!this.socket.destroyed && this.socket.writableLength < MAX_QUEUED_BYTES) this.socket.write(bytes);
      await sleep(5);
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}
