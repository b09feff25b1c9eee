// The fenced resource of a chaos run: an HTTP server on 127.0.0.1 in the runner's process that
// keeps, per lock name, a counter and the highest fencing token it accepted. Clients do a
// read-modify-write under the lock: GET the value, then POST the new one with their token and
// the value they read. A write is refused as `stale` when its token is below the highest
// accepted (an equal token is the same holder writing again), and as a `conflict` when the value
// moved since the client read it; every attempt is recorded with its time and outcome.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { now, type ResourceWrite, type WriteOutcome } from './history.ts';

/** What a client asks to write: the recorded write's own fields, before the resource decides. */
export type WriteRequest = Pick<ResourceWrite, 'lock' | 'client' | 'token' | 'expected' | 'value'>;

export interface WriteReply {
  outcome: WriteOutcome;
  highest: string | null;
}

interface Cell {
  value: number;
  highest: bigint | null;
}

export class ProtectedResource {
  readonly writes: ResourceWrite[] = [];
  private readonly cells = new Map<string, Cell>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ProtectedResource> {
    let resource: ProtectedResource | undefined;
    const server = createServer((req, res) => {
      resource?.handle(req, res).catch((error: unknown) => reply(res, 500, { error: String(error) }));
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as { port: number };
    resource = new ProtectedResource(server, `http://127.0.0.1:${port}`);
    return resource;
  }

  /** The write rule, callable without HTTP (the unit test's way in). */
  write(request: WriteRequest): WriteReply {
    const cell = this.cell(request.lock);
    const token = BigInt(request.token);
    const highestBefore = cell.highest;
    let outcome: WriteOutcome;
    if (highestBefore !== null && token < highestBefore) outcome = 'stale';
    else if (cell.value !== request.expected) outcome = 'conflict';
    else outcome = 'accepted';
    if (outcome === 'accepted') {
      cell.value = request.value;
      cell.highest = token;
    }
    this.writes.push({
      t: now(),
      lock: request.lock,
      client: request.client,
      token: request.token,
      expected: request.expected,
      value: request.value,
      outcome,
      highestBefore: highestBefore?.toString() ?? null,
    });
    return { outcome, highest: cell.highest?.toString() ?? null };
  }

  read(lock: string): number {
    return this.cell(lock).value;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private cell(lock: string): Cell {
    let cell = this.cells.get(lock);
    if (cell === undefined) {
      cell = { value: 0, highest: null };
      this.cells.set(lock, cell);
    }
    return cell;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const lock = url.searchParams.get('lock');
    if (lock === null || lock === '') return reply(res, 400, { error: 'lock is required' });
    if (req.method === 'GET' && url.pathname === '/value') return reply(res, 200, { value: this.read(lock) });
    if (req.method === 'POST' && url.pathname === '/write') {
      const body = JSON.parse(await readBody(req)) as Partial<WriteRequest>;
      if (
        typeof body.client !== 'string' ||
        typeof body.token !== 'string' ||
        !/^\d+$/.test(body.token) ||
        typeof body.expected !== 'number' ||
        typeof body.value !== 'number'
      ) {
        return reply(res, 400, { error: 'client, token (decimal string), expected and value are required' });
      }
      return reply(res, 200, this.write({ lock, client: body.client, token: body.token, expected: body.expected, value: body.value }));
    }
    reply(res, 404, { error: 'GET /value?lock= or POST /write?lock=' });
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
