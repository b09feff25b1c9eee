// GET /api/v1/events: the dashboard's server-sent event stream. The hub (server/ops/event-hub.ts)
// decides what to send; this file turns its frames into bytes on one HTTP response and
// protects the process from a reader that stops reading: a stream never holds more than
// `maxBufferedBytes` for its reader, it is dropped instead (the browser's EventSource
// reconnects and gets a fresh snapshot).
import type { DaemonFacade, FeedFacade, FeedSubscriber } from '../daemon-facade.ts';
import { refuseRead } from './route-kit.ts';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Tells nginx-style proxies not to buffer the stream.
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/** First bytes of every stream: how long the browser waits before reconnecting. */
export const RETRY_FRAME = 'retry: 2000\n\n';
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();
let cachedFrame = '';
let cachedBytes = new Uint8Array(0);

/**
 * The hub hands the same frame string to every stream one after another, so a one-entry cache
 * encodes each frame once however many dashboards are open. Sharing the bytes is safe: a
 * default (non-byte) ReadableStream never transfers or changes an enqueued chunk.
 */
function encodeFrame(frame: string): Uint8Array {
  if (frame !== cachedFrame) {
    cachedBytes = encoder.encode(frame);
    cachedFrame = frame;
  }
  return cachedBytes;
}

export function eventsRoute(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? eventStream(req.signal, daemon.feed);
}

/** The SSE response for one reader of `feed`; ends when `signal` aborts or the body is cancelled. */
export function eventStream(signal: AbortSignal, feed: Pick<FeedFacade, 'subscribe'>, maxBufferedBytes = MAX_BUFFERED_BYTES): Response {
  let unsubscribe: (() => void) | null = null;
  let ended = false;
  const leave = (): void => {
    signal.removeEventListener('abort', onAbort);
    const u = unsubscribe;
    unsubscribe = null;
    u?.();
  };
  let onAbort = (): void => {};

  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let slow = false;
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
            // desiredSize = maxBufferedBytes - bytes queued: below zero, the reader is too far behind.
            const room = controller.desiredSize;
            if (room === null || room < 0) {
              slow = true;
              return false;
            }
            controller.enqueue(encodeFrame(frame));
            return true;
          },
          close: end,
        };
        if (signal.aborted) {
          ended = true;
          controller.close();
          return;
        }
        onAbort = end;
        signal.addEventListener('abort', onAbort, { once: true });
        controller.enqueue(encodeFrame(RETRY_FRAME));
        unsubscribe = feed.subscribe(subscriber);
        // The hub may have refused the subscriber inside subscribe (closed, or no room).
        if (ended) leave();
      },
      cancel() {
        ended = true;
        leave();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBufferedBytes }),
  );
  return new Response(stream, { headers: SSE_HEADERS });
}
