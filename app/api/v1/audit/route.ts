import { getAudit } from '@/server/ops-api/overview.ts';
import { otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getAudit);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
