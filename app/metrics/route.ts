import { getMetrics } from '@/server/api-handlers/probes.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getMetrics);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
