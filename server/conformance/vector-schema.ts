// The shape of a conformance vector file (conformance/README.md), checked with zod when the kit
// server or a test loads the vectors, so a typo in a vector fails at load with its file and id
// rather than as a puzzling FAIL halfway through a client's run.
import { z } from 'zod';

const label = z.string().min(1);
const ms = z.number().int().min(0);

/** One step of the server's script: what the kit server expects and sends. */
const scriptSteps = [
  z.strictObject({ accept: label, node: z.string().optional() }),
  // node: the line must come on a connection to that node (after a redirect, say).
  z.strictObject({ expect: z.string(), conn: label.optional(), node: z.string().optional() }),
  z.strictObject({ expect_any_order: z.array(z.string()).min(1), conn: label.optional() }),
  // exact_text: the daemon check compares the text part of E/ERROR lines too.
  z.strictObject({ send: z.string(), conn: label.optional(), exact_text: z.boolean().optional() }),
  z.strictObject({ send_raw: z.string(), conn: label.optional() }),
  z.strictObject({ send_repeat: z.strictObject({ text: z.string().min(1), count: z.number().int().min(1) }), conn: label.optional() }),
  z.strictObject({ close: label }),
  z.strictObject({ reset: label }),
  z.strictObject({ expect_close: label }),
  z.strictObject({ sleep_ms: ms }),
  // Operator actions only the real-daemon check performs (through the ops API); the kit server
  // skips them, since its script sends the resulting lines itself.
  // shutdown: SIGTERM, as it were (the daemon says goodbye to every connection).
  z.strictObject({ admin: z.enum(['force-release', 'kick', 'shutdown']), lock: z.string().optional() }),
] as const;
const plainStepSchema = z.union(scriptSteps);
export type PlainServerStep = z.infer<typeof plainStepSchema>;
// Steps only the real-daemon check plays: another client's lines (a holder the client under test
// queues behind), which the kit server has no one to play, so it skips them.
export const serverStepSchema = z.union([...scriptSteps, z.strictObject({ daemon_only: z.array(plainStepSchema).min(1) })]);
export type ServerStep = z.infer<typeof serverStepSchema>;

const outcomeSchema = z.union([
  z.strictObject({ granted: z.string().regex(/^\d{1,20}$/) }),
  z.strictObject({ timeout: z.literal(true) }),
  z.strictObject({ released: z.boolean() }),
  z.strictObject({ error: z.string().min(1) }),
]);
export type Outcome = z.infer<typeof outcomeSchema>;

/** One step of the client under test, played by a runner in the client's language. */
export const clientStepSchema = z.union([
  z.strictObject({ call: z.literal('acquire'), id: label, name: z.string(), lease_ms: z.number().positive(), wait_ms: ms }),
  z.strictObject({ call: z.literal('try_acquire'), id: label, name: z.string(), lease_ms: z.number().positive() }),
  z.strictObject({ call: z.literal('release'), id: label, of: label }),
  z.strictObject({ call: z.literal('hold'), id: label, name: z.string(), lease_ms: z.number().positive(), wait_ms: ms }),
  // One of several outcomes: for behaviour the kit allows to differ between clients.
  z.strictObject({ await: label, outcome: outcomeSchema.optional(), outcome_any: z.array(outcomeSchema).min(1).optional(), within_ms: ms }),
  z.strictObject({ await_lost: label, code: z.string().nullable(), within_ms: ms }),
  z.strictObject({ not_lost: label, for_ms: ms }),
  z.strictObject({ sleep_ms: ms }),
  z.strictObject({ close_client: z.literal(true) }),
]);
export type ClientStep = z.infer<typeof clientStepSchema>;

const clientOptionsSchema = z.strictObject({
  addresses: z.array(z.string()).min(1).optional(),
  // Required: a client's default identity differs by language and host, so a vector says which.
  identity: z.string().nullable(),
  resumable: z.boolean().optional(),
  release_retry_for_ms: ms.optional(),
  release_retry_interval_ms: ms.optional(),
  reconnect_interval_ms: ms.optional(),
  min_heartbeat_interval_ms: ms.optional(),
  max_park_ms: ms.optional(),
  connect_timeout_ms: ms.optional(),
});
export type ClientOptions = z.infer<typeof clientOptionsSchema>;

const daemonSchema = z.union([
  z.literal(false),
  z.strictObject({
    args: z.array(z.string()).optional(),
  }),
]);
export type DaemonSetup = z.infer<typeof daemonSchema>;

export const vectorSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/),
  doc: z.string().min(1),
  about: z.string().min(1),
  nodes: z
    .array(z.string().regex(/^[a-z0-9]+$/))
    .min(1)
    .optional(),
  ignore: z.array(z.string().min(1)).optional(),
  client: z.strictObject({ options: clientOptionsSchema, steps: z.array(clientStepSchema) }),
  server: z.array(serverStepSchema).min(1),
  daemon: daemonSchema,
});
export type Vector = z.infer<typeof vectorSchema>;

export const vectorFileSchema = z.strictObject({
  area: z.string().regex(/^[a-z0-9-]+$/),
  protocol: z.enum(['keyed', 'session']),
  vectors: z.array(z.unknown()).min(1),
});

export type Protocol = 'keyed' | 'session';

/** A vector with what its file says about it. */
export interface LoadedVector extends Vector {
  readonly protocol: Protocol;
  readonly file: string;
}

/** The nodes of a vector, defaulting to one. */
export function nodesOf(vector: Vector): readonly string[] {
  return vector.nodes ?? ['n1'];
}
