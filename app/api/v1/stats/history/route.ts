import { getStatsHistory } from '@/server/api-handlers/history-read.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(getStatsHistory);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
