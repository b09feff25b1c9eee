// One claim, one owner, across the two protocols on one daemon (real sockets on 127.0.0.1): a
// session's claim is owned by its connection, so a keyed `R` that names its token is refused and
// changes nothing; a keyed grant is owned by its token, on any keyed connection.
import { describe, expect, it } from 'vitest';
import { KeyedClient } from '../../lib/client/keyed-client.ts';
import { BatonError, ERRORS } from '../../lib/errors.ts';
import { daemonKit } from '../testing/daemon-kit.ts';

const kit = daemonKit();
const { daemon, client } = kit;

describe('a keyed R for a session claim', () => {
  it('is refused with E R <key> session-claim; the session still holds and is answered, its waiter still waits', async () => {
    const d = await daemon();
    const a = await client(d.sessionAddress.port);
    a.send('ACQUIRE shared 60000');
    const acquired = await a.next();
    expect(acquired).toMatch(/^ACQUIRED \d+$/);
    const token = acquired.slice('ACQUIRED '.length);
    const b = await client(d.sessionAddress.port);
    b.send('ACQUIRE shared 60000');
    expect(await b.next()).toBe('WAITING 1');

    const keyed = await client(d.lockAddress.port);
    keyed.send(`R shared ${token}`);
    expect(await keyed.next()).toBe(`E R shared session-claim ${ERRORS['session-claim'].message}`);

    a.send('HEARTBEAT');
    expect(await a.next()).toBe(acquired);
    b.send('HEARTBEAT');
    expect(await b.next()).toBe('WAITING 1');
    expect(d.engine.lock('shared')?.holder?.token).toBe(BigInt(token));
    // The keyed connection stays usable: the refusal was about one request.
    keyed.send('A other 30 0');
    expect(await keyed.next()).toMatch(/^A other \d+$/);

    // The session's own way to release still works: closing hands the lock to B.
    a.close();
    expect(await b.next()).toBe(`ACQUIRED ${BigInt(token) + 2n}`);
    expect(b.closed).toBe(false);
  });

  it('still answers STALE for a session token that no longer holds', async () => {
    const d = await daemon();
    const a = await client(d.sessionAddress.port);
    a.send('ACQUIRE gone 60000');
    const token = (await a.next()).slice('ACQUIRED '.length);
    const b = await client(d.sessionAddress.port);
    b.send('ACQUIRE gone 60000');
    expect(await b.next()).toBe('WAITING 1');
    a.close();
    expect(await b.next()).toMatch(/^ACQUIRED \d+$/); // A's close has reached the server
    const keyed = await client(d.lockAddress.port);
    keyed.send(`R gone ${token}`);
    expect(await keyed.next()).toBe('R gone STALE');
  });
});

describe('the keyed client library', () => {
  it('rejects release() of a session token with BatonError session-claim, and the session keeps the lock', async () => {
    const d = await daemon();
    const a = await client(d.sessionAddress.port);
    a.send('ACQUIRE lib 60000');
    const acquired = await a.next();
    const keyed = new KeyedClient({ addresses: [`127.0.0.1:${d.lockAddress.port}`] });
    kit.defer(() => keyed.close());
    const outcome = await keyed.release('lib', BigInt(acquired.slice('ACQUIRED '.length))).then(
      (released) => ({ released }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).toMatchObject({ error: expect.any(BatonError) });
    expect((outcome as { error: BatonError }).error.code).toBe('session-claim');
    a.send('HEARTBEAT');
    expect(await a.next()).toBe(acquired);
  });
});

describe('a keyed grant', () => {
  it('is released by its token from any keyed connection: the token is the credential', async () => {
    const d = await daemon();
    const holder = await client(d.lockAddress.port);
    holder.send('A job 30 0');
    const token = (await holder.next()).split(' ')[2] as string;
    const other = await client(d.lockAddress.port);
    other.send(`R job ${token}`);
    expect(await other.next()).toBe('R job OK');
    // Its holder learns it by its own R: STALE, nothing changed.
    holder.send(`R job ${token}`);
    expect(await holder.next()).toBe('R job STALE');
  });
});
