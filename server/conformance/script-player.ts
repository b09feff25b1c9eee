// Plays the server side of one vector: a pure state machine with no sockets. The socket edge
// (vector-play.ts) feeds it connections, lines and closes, and carries out the sends, closes and
// resets it asks for; a test can drive it with plain calls. Each event runs the script as far as
// it can go; the verdict is asked for when the runner says DONE.
import { nodesOf } from './vector-schema.ts';
import type { ServerStep, Vector } from './vector-schema.ts';

/** What the player asks of its edge. Connections are numbered by the edge. */
export interface PlayerWire {
  send(conn: number, text: string): void;
  /** FIN, after what was sent. */
  close(conn: number): void;
  /** RST. */
  reset(conn: number): void;
  /** Calls `then` after `ms` (a timer the edge owns and clears when the play ends). */
  after(ms: number, then: () => void): void;
}

interface Conn {
  readonly id: number;
  readonly node: string;
  /** Lines received and not yet consumed by a step. */
  readonly queue: string[];
  /** A step bound or read it: its stray lines count against the client. */
  named: boolean;
  closedByClient: boolean;
  /**
   * The script closed or reset it: what the client sent before it noticed is not held against
   * it, and no label binds to it any more.
   */
  dead: boolean;
}

export class ScriptPlayer {
  private readonly steps: readonly ServerStep[];
  private readonly nodes: readonly string[];
  private readonly ignore: readonly string[];
  private readonly conns: Conn[] = [];
  private readonly labels = new Map<string, Conn>();
  private index = 0;
  private sleeping = false;
  private failure: string | undefined;
  /** The connection of the latest expect or accept: where a send without `conn` goes. */
  private current: Conn | undefined;
  /** Lines of an expect_any_order still to arrive. */
  private anyOrderLeft: string[] | undefined;
  /** Claim keys seen so far (`{key:k1}` in an expect), by name. */
  private readonly keys = new Map<string, string>();

  constructor(
    vector: Vector,
    private readonly addresses: ReadonlyMap<string, string>,
    private readonly wire: PlayerWire,
  ) {
    this.steps = vector.server;
    this.nodes = nodesOf(vector);
    this.ignore = vector.ignore ?? [];
  }

  start(): void {
    this.advance();
  }

  connected(id: number, node: string): void {
    this.conns.push({ id, node, queue: [], named: false, closedByClient: false, dead: false });
    this.advance();
  }

  received(id: number, line: string): void {
    const conn = this.conns.find((c) => c.id === id);
    if (conn === undefined) return;
    conn.queue.push(line);
    this.advance();
  }

  closed(id: number): void {
    const conn = this.conns.find((c) => c.id === id);
    if (conn === undefined) return;
    conn.closedByClient = true;
    this.advance();
  }

  /** Whether the script has run to its end (or failed): nothing more can change the verdict but stray lines. */
  settled(): boolean {
    return this.failure !== undefined || this.index >= this.steps.length;
  }

  /** `PASS`, or `FAIL <reason>`: the script must have ended and nothing stray have arrived. */
  verdict(): string {
    if (this.failure !== undefined) return `FAIL ${this.failure}`;
    const step = this.steps[this.index];
    if (step !== undefined) {
      const left = this.anyOrderLeft === undefined ? '' : ` (still missing ${JSON.stringify(this.anyOrderLeft)})`;
      return `FAIL server step ${this.index + 1} ${JSON.stringify(step)} never completed${left}; ${this.arrived()}`;
    }
    for (const conn of this.conns) {
      const stray = conn.queue.find((line) => !this.ignored(line));
      if (conn.named && !conn.dead && stray !== undefined) return `FAIL unexpected line from the client on ${this.nameOf(conn)}: ${clip(stray)}`;
    }
    return 'PASS';
  }

  private advance(): void {
    while (this.failure === undefined && !this.sleeping) {
      const step = this.steps[this.index];
      if (step === undefined || !this.run(step)) return;
      this.index++;
    }
  }

  /** Runs one step; false when it must wait for the client. */
  private run(step: ServerStep): boolean {
    if ('accept' in step) return this.accept(step.accept, step.node ?? this.nodes[0] ?? 'n1');
    if ('expect' in step) return this.expectLines([this.fill(step.expect)], step.conn, step.node);
    if ('expect_any_order' in step) {
      this.anyOrderLeft ??= step.expect_any_order.map((text) => this.fill(text));
      const done = this.expectLines(this.anyOrderLeft, step.conn);
      if (done) this.anyOrderLeft = undefined;
      return done;
    }
    if ('send' in step) return this.write(step.conn, `${this.fill(step.send)}\n`);
    if ('send_raw' in step) return this.write(step.conn, this.fill(step.send_raw));
    if ('send_repeat' in step) return this.write(step.conn, step.send_repeat.text.repeat(step.send_repeat.count));
    if ('close' in step) return this.onBound(step.close, (conn) => this.wire.close(conn.id));
    if ('reset' in step) return this.onBound(step.reset, (conn) => this.wire.reset(conn.id));
    if ('daemon_only' in step) return true;
    if ('expect_close' in step) {
      const conn = this.labels.get(step.expect_close);
      if (conn === undefined) return this.fail(`expect_close of ${step.expect_close}, which no step has bound`);
      return conn.closedByClient;
    }
    if ('sleep_ms' in step) {
      this.sleeping = true;
      this.wire.after(step.sleep_ms, () => {
        this.sleeping = false;
        this.index++;
        this.advance();
      });
      return false;
    }
    return true; // admin: only the real-daemon check performs it
  }

  private accept(label: string, node: string): boolean {
    if (this.labels.has(label)) return this.fail(`accept ${label}: that label is already bound`);
    const conn = this.conns.find((c) => c.node === node && !c.named && !c.dead);
    if (conn === undefined) return false;
    this.bind(conn, label);
    return true;
  }

  /**
   * Consumes `wanted` (removing each line found) from the heads of the candidate connections:
   * one connection's lines are read in the order they came, so a line behind a stray one waits
   * (an `ignore`d line is skipped when it is not wanted).
   */
  private expectLines(wanted: string[], label: string | undefined, node?: string): boolean {
    const bound = label === undefined ? undefined : this.labels.get(label);
    const candidates = (bound === undefined ? this.conns.filter((conn) => !conn.dead) : [bound]).filter((conn) => node === undefined || conn.node === node);
    let progress = true;
    while (wanted.length > 0 && progress) {
      progress = false;
      for (const conn of candidates) {
        const at = this.headMatch(conn, wanted);
        if (at < 0) continue;
        conn.queue.shift();
        wanted.splice(at, 1);
        if (label !== undefined && !this.labels.has(label)) this.bind(conn, label);
        conn.named = true;
        this.current = conn;
        progress = true;
        break;
      }
    }
    return wanted.length === 0;
  }

  /** The index in `wanted` of the pattern the connection's next line matches, or -1. */
  private headMatch(conn: Conn, wanted: readonly string[]): number {
    for (;;) {
      const head = conn.queue[0];
      if (head === undefined) return -1;
      const at = wanted.findIndex((pattern) => this.matches(pattern, head));
      if (at >= 0 || !this.ignored(head)) return at;
      conn.queue.shift();
    }
  }

  /**
   * Whether `line` is `pattern`, where `{key:k}` stands for a claim key (32 to 64 hex digits):
   * the first match of a name binds it, later ones must be the same key.
   */
  private matches(pattern: string, line: string): boolean {
    if (!pattern.includes('{key:')) return pattern === line;
    const names: string[] = [];
    const source = pattern
      .split(/(\{key:[a-z0-9]+\})/)
      .map((part) => {
        const name = /^\{key:([a-z0-9]+)\}$/.exec(part)?.[1];
        if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(name);
        return '([0-9a-fA-F]{32,64})';
      })
      .join('');
    const found = new RegExp(`^${source}$`).exec(line);
    if (found === null) return false;
    const seen = names.map((name, index) => [name, found[index + 1] ?? ''] as const);
    if (seen.some(([name, key]) => (this.keys.get(name) ?? key) !== key)) return false;
    for (const [name, key] of seen) this.keys.set(name, key);
    return true;
  }

  private ignored(line: string): boolean {
    return this.ignore.some((prefix) => line.startsWith(prefix));
  }

  private write(label: string | undefined, text: string): boolean {
    const conn = label === undefined ? this.current : this.labels.get(label);
    if (conn === undefined) return this.fail(`a send with no connection to go to (${label ?? 'no conn, no expect or accept before it'})`);
    this.wire.send(conn.id, text);
    return true;
  }

  private onBound(label: string, action: (conn: Conn) => void): boolean {
    const conn = this.labels.get(label);
    if (conn === undefined) return this.fail(`${label} is not bound to a connection yet`);
    conn.dead = true;
    action(conn);
    return true;
  }

  private bind(conn: Conn, label: string): void {
    this.labels.set(label, conn);
    conn.named = true;
    this.current = conn;
  }

  private fill(text: string): string {
    return text.replace(/\{node:([a-z0-9]+)\}/g, (whole, node: string) => this.addresses.get(node) ?? whole);
  }

  private fail(reason: string): false {
    this.failure ??= `server step ${this.index + 1}: ${reason}`;
    return false;
  }

  private nameOf(conn: Conn): string {
    const names = [...this.labels].filter(([, c]) => c === conn).map(([name]) => name);
    return names.length > 0 ? names.join('=') : `an unnamed connection to ${conn.node}`;
  }

  /** What the client sent that no step took, for a FAIL reason. */
  private arrived(): string {
    const parts = this.conns
      .filter((conn) => conn.queue.length > 0)
      .map((conn) => `${this.nameOf(conn)} sent ${clip(conn.queue[0] ?? '')}${conn.queue.length > 1 ? ` and ${conn.queue.length - 1} more` : ''}`);
    const closed = this.conns.filter((conn) => conn.closedByClient).map((conn) => this.nameOf(conn));
    if (closed.length > 0) parts.push(`closed by the client: ${closed.join(', ')}`);
    if (parts.length === 0) parts.push(`nothing unread arrived (${this.conns.length} connections)`);
    return `instead: ${parts.join('; ')}`;
  }
}

function clip(line: string): string {
  return JSON.stringify(line.length > 120 ? `${line.slice(0, 120)}...` : line);
}
