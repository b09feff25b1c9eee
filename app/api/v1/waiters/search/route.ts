import { getWaiterSearch } from '@/server/api-handlers/lock-views-read.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getWaiterSearch);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
