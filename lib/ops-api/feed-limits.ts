// The event feed's flow-control figures that both sides of GET /api/v1/events use: the hub
// (server/live-feed) decides with them, and the route sizes the stream's buffer by them, so they
// live in the contract and the route does not import the hub.

/** The slow-reader limit: bytes a stream may be behind (its queue, and snapshot pages held for it). */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** A stream takes the next snapshot chunk only when less than this is queued for it. */
export const LOW_WATER_BYTES = 256 * 1024;
