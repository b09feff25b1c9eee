import { postHandoff } from '@/server/ops-api/handoff.ts';
import { otherMethods, withDaemon } from '@/server/ops-api/route-kit.ts';

export const dynamic = 'force-dynamic';

export const POST = withDaemon(postHandoff);
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
