// POST /api/v1/cluster/restore: lets a node that gave the active role away by an API handoff
// take it back by priority again (without a body, every node that yielded).
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { adminAction, adminOutcome } from './admin-action.ts';
import { auditTarget } from '../../lib/ops-api/admin-request.ts';
import { readJsonBody } from './request-input.ts';

/** Strict, like handoff: a misspelt "node" must not become "every node". */
const restoreBody = z.strictObject({ node: z.string().min(1).max(256).optional() }).optional();

export function postRestore(req: Request, daemon: DaemonFacade): Promise<Response> {
  let node: string | null = null;
  return adminAction(
    req,
    daemon,
    'restore',
    () => auditTarget({ op: 'restore', node }),
    async (who) => {
      const body = await readJsonBody(req, restoreBody);
      if (!body.ok) return body;
      node = body.value?.node ?? null;
      return adminOutcome(await daemon.admin.run({ op: 'restore', node }, who));
    },
  );
}
