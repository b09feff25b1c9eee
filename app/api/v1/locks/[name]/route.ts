import { getLock } from '@/server/ops-api/locks-read.ts';
import { otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const GET = withDaemon<{ name: string }>(getLock);
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
