import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidClientName } from '../../lib/protocol/client-name.ts';
import { runClientName, shellQuote } from './run-client-name.ts';

const HOST = 'host-3';
const PID = 4121;
const TAIL = ` @${HOST} pid ${PID}`;

/** The words bash reads from `line` (bash, not sh: Debian's dash has no $'...'). */
function bashWords(line: string): string[] {
  const run = spawnSync('bash', ['-c', `for w in ${line}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout.split('\0').slice(0, -1);
}

/** The command part of an identity that was not cut. */
function commandOf(identity: string | null): string {
  expect(identity?.startsWith('baton run ')).toBe(true);
  expect(identity?.endsWith(TAIL)).toBe(true);
  return (identity ?? '').slice('baton run '.length, -TAIL.length);
}

const TRICKY: readonly (readonly string[])[] = [
  ['sh', '-c', 'echo a b'],
  ['sh', '-c', 'echo', 'a', 'b'],
  ['printf', ''],
  ['echo', "it's"],
  ['echo', `it's "$HOME" \`id\` \\`],
  ['echo', 'a\nb', 'tab\there', 'cr\r'],
  ['echo', 'héllo', '日本語', 'emoji 🎉'],
  ['echo', 'zero\u200bwidth', 'bidi\u202eevil', 'nbsp\u00a0x', 'bell\u0007'],
  ['echo', '*', '~', '#x', 'a;b', 'a|b', '$(id)', '!', 'a=b', '-', '--flag=x y'],
];

describe('baton run identities: the command quoted as a shell reads it', () => {
  it('quotes only where needed', () => {
    expect(['sh', '-c', 'echo a b', "it's", '', 'a\nb', 'héllo', '--x=1,2', 'zw\u200b'].map(shellQuote)).toEqual([
      'sh',
      '-c',
      "'echo a b'",
      `"it's"`,
      "''",
      "$'a\\nb'",
      'héllo',
      '--x=1,2',
      "$'zw\\xE2\\x80\\x8B'",
    ]);
    expect(shellQuote(`it's $x`)).toBe(`'it'\\''s $x'`);
  });

  it('tells sh -c "echo a b" apart from sh -c echo a b', () => {
    const one = runClientName(['sh', '-c', 'echo a b'], HOST, PID);
    const three = runClientName(['sh', '-c', 'echo', 'a', 'b'], HOST, PID);
    expect(one).toBe(`baton run sh -c 'echo a b'${TAIL}`);
    expect(three).toBe(`baton run sh -c echo a b${TAIL}`);
  });

  it('gives back each tricky argument list word for word through bash, as a valid identity', () => {
    for (const command of TRICKY) {
      const identity = runClientName(command, HOST, PID);
      expect(isValidClientName(identity ?? ''), JSON.stringify(identity)).toBe(true);
      expect(bashWords(commandOf(identity))).toEqual(command);
    }
  });

  it('any argument list that fits reads back the same (parsed by bash), and any at all is a valid identity of at most 128 bytes', () => {
    const arg = fc.string({ unit: 'grapheme', maxLength: 12 });
    const lines: { command: string[]; line: string }[] = [];
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 6 }), (command) => {
        const identity = runClientName(command, HOST, PID);
        expect(identity).not.toBeNull();
        expect(isValidClientName(identity ?? '')).toBe(true);
        expect(Buffer.byteLength(identity ?? '')).toBeLessThanOrEqual(128);
        expect(identity?.endsWith(TAIL)).toBe(true);
        if (!identity?.includes('…')) lines.push({ command, line: commandOf(identity) });
      }),
      { numRuns: 300 },
    );
    expect(lines.length).toBeGreaterThan(100);
    // One bash for all of them: each line's words, then a separator.
    const script = lines.map(({ line }) => `for w in ${line}; do printf '%s\\0' "$w"; done; printf '\\1\\0'`).join('\n');
    const run = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const parsed = run.stdout
      .split('\u0001\0')
      .slice(0, -1)
      .map((words) => words.split('\0').slice(0, -1));
    expect(parsed).toEqual(lines.map(({ command }) => command));
  });

  it('cuts a long command after its last whole word with …, keeping the host and pid', () => {
    const command = ['deploy', '--message', 'x'.repeat(40), 'y y'.repeat(30)];
    const identity = runClientName(command, HOST, PID);
    expect(identity).toBe(`baton run deploy --message ${'x'.repeat(40)} …${TAIL}`);
    const huge = runClientName(['/opt/' + 'd'.repeat(200)], HOST, PID);
    expect(Buffer.byteLength(huge ?? '')).toBe(128);
    expect(huge).toMatch(new RegExp(`^baton run /opt/d+…${TAIL}$`));
  });
});
