// The kit server's control port (conformance/README.md): a runner sends `PLAY <id>`, gets the
// vector's fresh node addresses, drives its client, sends `DONE` and reads `PASS` or `FAIL ...`.
// One control connection plays one vector at a time; closing it drops the vector being played.
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { VectorPlay } from './vector-play.ts';
import type { LoadedVector } from './vector-schema.ts';

export interface KitServerOptions {
  readonly host: string;
  /** 0 picks a free one. */
  readonly port: number;
  readonly vectors: readonly LoadedVector[];
}

export interface KitServer {
  readonly port: number;
  close(): Promise<void>;
}

/** How long DONE waits for a script still running to end before answering FAIL. */
const DONE_GRACE_MS = 1_000;
/** A control line longer than this is no command; the connection is closed. */
const MAX_CONTROL_LINE = 4096;

export async function startKitServer(options: KitServerOptions): Promise<KitServer> {
  const byId = new Map(options.vectors.map((vector) => [vector.id, vector]));
  const controls = new Set<Socket>();
  const plays = new Set<VectorPlay>();
  const server = createServer((socket) => {
    controls.add(socket);
    const session = new ControlSession(socket, byId, options.host, plays);
    socket.on('close', () => {
      controls.delete(socket);
      session.drop();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('the control listener has no port');
  let closing: Promise<void> | undefined;
  return {
    port: bound.port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const play of plays) play.dispose();
        for (const socket of controls) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

class ControlSession {
  private play: VectorPlay | undefined;
  private buffer = '';
  /** Commands run one after another: PLAY awaits its listeners before the next line is read. */
  private chain: Promise<void> = Promise.resolve();
  private dropped = false;

  constructor(
    private readonly socket: Socket,
    private readonly byId: ReadonlyMap<string, LoadedVector>,
    private readonly host: string,
    private readonly plays: Set<VectorPlay>,
  ) {
    socket.setEncoding('latin1');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => this.onData(chunk));
  }

  drop(): void {
    this.dropped = true;
    this.endPlay();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    for (let at = this.buffer.indexOf('\n'); at >= 0; at = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, at).replace(/\r$/, '');
      this.buffer = this.buffer.slice(at + 1);
      this.chain = this.chain.then(() => this.command(line));
    }
    if (this.buffer.length > MAX_CONTROL_LINE) {
      this.socket.end('ERR control line too long\n');
      this.buffer = '';
    }
  }

  private async command(line: string): Promise<void> {
    if (this.dropped) return;
    const [verb, ...rest] = line.trim().split(/\s+/);
    if (verb === 'PLAY' && rest.length === 1) return this.start(rest[0] ?? '');
    if (verb === 'DONE' && rest.length === 0) {
      if (this.play === undefined) return this.answer('ERR no vector is being played');
      const verdict = await this.play.settledVerdict(DONE_GRACE_MS);
      if (this.dropped) return;
      this.endPlay();
      return this.answer(verdict);
    }
    this.answer(`ERR unknown command ${JSON.stringify(line.slice(0, 80))}: PLAY <vector-id> or DONE`);
  }

  private async start(id: string): Promise<void> {
    if (this.play !== undefined) return this.answer(`ERR a vector is being played: send DONE first`);
    const vector = this.byId.get(id);
    if (vector === undefined) return this.answer(`ERR unknown vector ${JSON.stringify(id)}`);
    try {
      const { play, addresses } = await VectorPlay.open(vector, this.host);
      if (this.dropped) {
        play.dispose();
        return;
      }
      this.play = play;
      this.plays.add(play);
      this.answer(`READY ${[...addresses].map(([node, address]) => `${node}=${address}`).join(' ')}`);
    } catch (error) {
      this.answer(`ERR cannot listen for ${id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private endPlay(): void {
    if (this.play === undefined) return;
    this.play.dispose();
    this.plays.delete(this.play);
    this.play = undefined;
  }

  private answer(line: string): void {
    if (!this.socket.destroyed) this.socket.write(`${line}\n`);
  }
}
