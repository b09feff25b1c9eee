// POST /api/v1/cluster/handoff: asks this (active) node to hand the active role to a standby.
import { z } from 'zod';
import type { DaemonFacade } from '../daemon-facade.ts';
import { adminAction } from './admin-action.ts';
import { readJsonBody } from './request-input.ts';

/** No body or `{}` lets the cluster pick the standby (the highest priority alive). Strict: a misspelt "target" must not become "any standby". */
const handoffBody = z.strictObject({ target: z.string().min(1).max(256).optional() }).optional();

export function postHandoff(req: Request, daemon: DaemonFacade): Promise<Response> {
  let target: string | null = null;
  // The audit target is read after the action: the body is only parsed inside it.
  return adminAction(req, daemon, 'handoff', () => target ?? 'any standby', async () => {
    const body = await readJsonBody(req, handoffBody);
    if (!body.ok) return body;
    target = body.value?.target ?? null;
    const result = await daemon.handoff(target);
    if (!result.ok) return { ok: false, error: 'conflict', detail: result.reason };
    return { ok: true, body: { handoff: { target: result.target } }, detail: null };
  });
}
