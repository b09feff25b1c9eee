// GET /api/v1/events: the dashboard's server-sent event stream. The hub (server/live-feed/event-hub.ts)
// decides what to send; this file turns its frames into bytes on one HTTP response and
// protects the process from a reader that stops reading: a stream never holds more than
// `maxBufferedBytes` for its reader, it is dropped instead (the browser's EventSource
// reconnects and gets a fresh snapshot). The stream's queue tells the hub when its reader has
// taken what it had (pull, under LOW_WATER_BYTES): only then does it get more of its snapshot.
import type { DaemonFacade, FeedFacade, FeedJoin, FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { LOW_WATER_BYTES, MAX_BUFFERED_BYTES } from '../../lib/ops-api/feed-limits.ts';
import { clientAddress } from './client-address.ts';
import { errorResponse, refuseRead } from './route-kit.ts';

export { MAX_BUFFERED_BYTES };

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Tells nginx-style proxies not to buffer the stream.
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/** First bytes of every stream: how long the browser waits before reconnecting. */
export const RETRY_FRAME = 'retry: 2000\n\n';
const RETRY_BYTES = new TextEncoder().encode(RETRY_FRAME);

export function eventsRoute(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? eventStream(req.signal, daemon.feed, clientAddress(req));
}

/**
 * The SSE response for one reader of `feed` at address `client`; ends when `signal` aborts or
 * the body is cancelled. A 429 JSON error when the hub refuses one more stream for `client`.
 * The hub's frames are shared bytes: a default (non-byte) ReadableStream never transfers or
 * changes an enqueued chunk.
 */
export function eventStream(signal: AbortSignal, feed: Pick<FeedFacade, 'subscribe'>, client = 'local', maxBufferedBytes = MAX_BUFFERED_BYTES): Response {
  let join: FeedJoin | null = null;
  let refusal: Extract<FeedJoin, { ok: false }> | null = null;
  let ended = false;
  const leave = (): void => {
    signal.removeEventListener('abort', onAbort);
    const j = join;
    join = null;
    if (j?.ok === true) j.leave();
  };
  let onAbort = (): void => {};

  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let slow = false;
        let enqueued = 0;
        // desiredSize = LOW_WATER_BYTES - bytes queued (null once errored).
        const queued = (): number => Math.max(0, LOW_WATER_BYTES - (controller.desiredSize ?? LOW_WATER_BYTES));
        const end = (): void => {
          if (ended) return;
          ended = true;
          leave();
          try {
            // Erroring discards what is queued at once; closing would keep it for a reader that never comes.
            if (slow) controller.error(new Error(`SSE reader fell more than ${maxBufferedBytes} bytes behind`));
            else controller.close();
          } catch {
            // the stream was already cancelled
          }
        };
        const subscriber: FeedSubscriber = {
          send(frame) {
            if (ended) return false;
            if (queued() > maxBufferedBytes) {
              slow = true;
              return false;
            }
            controller.enqueue(frame);
            enqueued += frame.byteLength;
            return true;
          },
          queuedBytes: queued,
          takenBytes: () => enqueued - queued(),
          close: end,
        };
        if (signal.aborted) {
          ended = true;
          controller.close();
          return;
        }
        onAbort = end;
        signal.addEventListener('abort', onAbort, { once: true });
        controller.enqueue(RETRY_BYTES);
        enqueued += RETRY_BYTES.byteLength;
        const joined = feed.subscribe(subscriber, client);
        join = joined;
        // The hub may have refused the subscriber (too many streams) or closed it (shutting down).
        if (!joined.ok) {
          refusal = joined;
          ended = true;
        }
        if (ended) leave();
      },
      pull() {
        if (join?.ok === true) join.pull();
      },
      cancel() {
        ended = true;
        leave();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: LOW_WATER_BYTES }),
  );
  // start() ran inside the constructor: a refusal is known now.
  const refused = refusal as Extract<FeedJoin, { ok: false }> | null;
  if (refused !== null) {
    void stream.cancel();
    return errorResponse(refused.error, refused.detail);
  }
  return new Response(stream, { headers: SSE_HEADERS });
}
