import { getHealthz } from '@/server/ops-api/probes.ts';
import { otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getHealthz);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
