import { jsonResponse, otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon((_req, daemon) => {
  const state = daemon.state();
  return jsonResponse(200, { status: state === 'draining' ? 'draining' : 'ok', state, instanceId: daemon.instanceId, pid: process.pid, tokenHighWater: daemon.engine.tokenHighWater.toString() });
});
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
