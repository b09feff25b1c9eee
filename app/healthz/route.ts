import { withDaemon, jsonResponse } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon((_req, daemon) => {
  const state = daemon.state();
  return jsonResponse(200, { status: state === 'draining' ? 'draining' : 'ok', state, instanceId: daemon.instanceId, pid: process.pid, tokenHighWater: daemon.engine.tokenHighWater.toString() });
});
