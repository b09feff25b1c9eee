import { postHandoff } from '@/server/api-handlers/handoff.ts';
import { otherMethods, withDaemon } from '@/server/api-handlers/route-kit.ts';

export const dynamic = 'force-dynamic';

export const POST = withDaemon(postHandoff);
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
