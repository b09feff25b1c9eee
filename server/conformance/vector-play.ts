// The socket edge of one played vector: a fresh listener per node (port 0), every connection
// numbered and fed to the ScriptPlayer line by line, and the player's sends, closes and resets
// carried out. dispose() closes every listener, connection and timer; safe to call twice.
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { ScriptPlayer } from './script-player.ts';
import { nodesOf } from './vector-schema.ts';
import type { Vector } from './vector-schema.ts';

/** A client line longer than this is cut into a line of its own: the kit only needs to see it is wrong. */
const MAX_CLIENT_LINE = 1 << 20;

export class VectorPlay {
  private readonly servers: Server[] = [];
  private readonly sockets = new Map<number, Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextId = 1;
  private disposed = false;
  private player: ScriptPlayer | undefined;

  private constructor(private readonly vector: Vector) {}

  /** Listens for every node of `vector` on `host`, port 0; resolves with node -> host:port. */
  static async open(vector: Vector, host: string): Promise<{ play: VectorPlay; addresses: Map<string, string> }> {
    const play = new VectorPlay(vector);
    const addresses = new Map<string, string>();
    try {
      for (const node of nodesOf(vector)) {
        const server = createServer({ allowHalfOpen: true }, (socket) => play.adopt(socket, node));
        play.servers.push(server);
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, host, () => resolve());
        });
        const bound = server.address();
        if (bound === null || typeof bound === 'string') throw new Error('listener has no port');
        addresses.set(node, `${host}:${bound.port}`);
      }
    } catch (error) {
      play.dispose();
      throw error;
    }
    play.player = new ScriptPlayer(vector, addresses, {
      send: (id, text) => play.sockets.get(id)?.write(text),
      close: (id) => play.sockets.get(id)?.end(),
      reset: (id) => play.sockets.get(id)?.resetAndDestroy(),
      after: (ms, then) => {
        const timer = setTimeout(() => {
          play.timers.delete(timer);
          if (!play.disposed) then();
        }, ms);
        play.timers.add(timer);
      },
    });
    play.player.start();
    return { play, addresses };
  }

  /**
   * The verdict, once the script has ended or `graceMs` have passed: a runner sends DONE as soon
   * as its client reached its last outcome, which can be a moment before the kit server reads
   * the close or the line that the client sent on the way there.
   */
  async settledVerdict(graceMs: number): Promise<string> {
    const deadline = performance.now() + graceMs;
    while (this.player !== undefined && !this.player.settled() && !this.disposed && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.verdict();
  }

  verdict(): string {
    return this.player?.verdict() ?? `FAIL vector ${this.vector.id} never started`;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets.values()) socket.destroy();
    this.sockets.clear();
    for (const server of this.servers) server.close();
  }

  private adopt(socket: Socket, node: string): void {
    if (this.disposed || this.player === undefined) {
      socket.destroy();
      return;
    }
    const player = this.player;
    const id = this.nextId++;
    this.sockets.set(id, socket);
    socket.setNoDelay(true);
    socket.on('error', () => undefined); // a client reset is an event like any other: 'close' follows
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    let ended = false;
    const clientClosed = (): void => {
      if (ended) return;
      ended = true;
      player.closed(id);
    };
    player.connected(id, node);
    socket.on('data', (chunk: Buffer) => {
      buffer += decoder.write(chunk);
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        player.received(id, line.endsWith('\r') ? line.slice(0, -1) : line);
      }
      if (buffer.length > MAX_CLIENT_LINE) {
        player.received(id, buffer);
        buffer = '';
      }
    });
    socket.on('end', () => {
      clientClosed();
      // The client's FIN: finish our side too once the script's writes are out.
      socket.end();
    });
    socket.on('close', () => {
      this.sockets.delete(id);
      clientClosed();
    });
  }
}
