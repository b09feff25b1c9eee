// Keeps the charts' 1 h and 24 h history in the data dir, so a restarted node shows the past it
// had (issue 30). Read once at start; written every SAVE_INTERVAL_MS when anything was recorded,
// and once more at a clean stop. A kill -9 loses at most the last interval.
//
// A file that cannot be used (too large, not this format, counts that do not add up, not a
// regular file) is set aside as `chart-history.json.refused` with one log line and the charts
// start empty: never a crash, never numbers read as something they are not. A failed write is
// logged once (and once when writes work again); the charts carry on from memory.
import { lstat, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_FILE_BYTES, decodeHistory, encodeHistory } from './history-file.ts';
import type { HistoryRecorder } from './history-recorder.ts';

export const HISTORY_FILE = 'chart-history.json';
/** How often the history is written while it changes (one 10 s bucket). */
export const SAVE_INTERVAL_MS = 10_000;

/** The daemon's logger as this needs it (pino's shape). */
export interface HistoryLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

type Recorder = Pick<HistoryRecorder, 'saved' | 'restore' | 'ringShapes' | 'version'>;

export class HistoryStore {
  private readonly path: string;
  private timer: NodeJS.Timeout | null = null;
  private savedVersion = -1;
  private saving: Promise<void> = Promise.resolve();
  private failing = false;
  private closed: Promise<void> | null = null;

  private constructor(
    dir: string,
    private readonly recorder: Recorder,
    private readonly log: HistoryLog,
  ) {
    this.path = join(dir, HISTORY_FILE);
  }

  /** Reads the saved history into `recorder` (if there is a usable one) and starts the periodic save. */
  static async open(dir: string, recorder: Recorder, log: HistoryLog, intervalMs = SAVE_INTERVAL_MS): Promise<HistoryStore> {
    const store = new HistoryStore(dir, recorder, log);
    await store.load();
    store.savedVersion = recorder.version;
    store.timer = setInterval(() => void store.save(), intervalMs);
    store.timer.unref();
    return store;
  }

  private async load(): Promise<void> {
    let size: number;
    try {
      const st = await lstat(this.path);
      if (!st.isFile()) return await this.refuse('not a regular file');
      size = st.size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.log.warn({ file: this.path, err }, 'chart history file unreadable; the charts start empty');
      return;
    }
    if (size > MAX_FILE_BYTES) return await this.refuse(`${size} bytes, above the ${MAX_FILE_BYTES}-byte ceiling`);
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      this.log.warn({ file: this.path, err }, 'chart history file unreadable; the charts start empty');
      return;
    }
    const result = decodeHistory(text, this.recorder.ringShapes);
    if (!result.ok) return await this.refuse(result.reason);
    const buckets = this.recorder.restore(result.history);
    this.log.info({ file: this.path, buckets, savedAt: result.history.savedAt }, 'chart history restored');
  }

  private async refuse(reason: string): Promise<void> {
    const aside = `${this.path}.refused`;
    this.log.warn({ file: this.path, reason, setAsideAs: aside }, 'chart history file refused; the charts start empty');
    await rename(this.path, aside).catch(() => {});
  }

  /** Writes the history if it changed since the last write (temp file, then rename: never half a file). */
  save(): Promise<void> {
    this.saving = this.saving.then(() => this.write());
    return this.saving;
  }

  private async write(): Promise<void> {
    const version = this.recorder.version;
    if (version === this.savedVersion) return;
    const tmp = `${this.path}.tmp`;
    try {
      await writeFile(tmp, encodeHistory(this.recorder.saved()));
      await rename(tmp, this.path);
      this.savedVersion = version;
      if (this.failing) this.log.info({ file: this.path }, 'chart history saved again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log.warn({ file: this.path, err }, 'chart history could not be saved; the charts keep it in memory');
      this.failing = true;
    }
  }

  /** Stops the periodic save and writes once more. Safe to call twice. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
      await this.save();
    })();
    return this.closed;
  }
}
