import { getAudit } from '@/server/api-handlers/overview.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getAudit);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
