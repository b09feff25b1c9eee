// The identity a client library sends (keyed `I`, session `CLIENT`): by default who runs it and
// where ("deploy@host-3 pid 4121"), so an operator can tell a stuck worker from its port alone;
// `clientName` overrides it, and `clientName: null` sends none (the seed protocol's bytes).
// What a valid identity is, for client and server alike, is lib/protocol/client-name.ts.
import { hostname, userInfo } from 'node:os';
import { BatonError } from '../errors.ts';
import { isValidClientName, toClientName } from '../protocol/client-name.ts';

/** `${user}@${host} pid ${pid}`, made valid (lib/protocol/client-name.ts, the rule itself) and cut to 128 bytes. */
export function defaultClientName(prefix = ''): string | null {
  return toClientName(`${prefix}${userName()}@${hostname()} pid ${process.pid}`);
}

/** The identity to send: the option when given (checked: a bad one throws bad-identity), else the default. */
export function resolveClientName(option: string | null | undefined): string | null {
  if (option === undefined) return defaultClientName();
  if (option !== null && !isValidClientName(option)) {
    throw new BatonError('bad-identity', JSON.stringify(option));
  }
  return option;
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for this uid (a container): the environment may still say.
    return process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}
