import { listLocks } from '@/server/api-handlers/locks-read.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon(listLocks);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
