// The line `baton serve` prints on stdout once every port is bound (`lock=host:port session=…
// http=…`), read from a child process: how tests and benchmarks learn the ports a port of 0 chose.
import type { ChildProcess } from 'node:child_process';

export interface StartedPorts {
  lockPort: number;
  sessionPort: number;
  httpPort: number;
}

/**
 * A child's first stdout line (without its newline); rejects if the child fails to start or
 * exits first. `who` names it in the error. The benchmarks' floor server announces itself so too.
 */
export function firstStdoutLine(child: ChildProcess, who: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${who} exited early with ${code ?? signal}`)));
  });
}

/** Waits for the first stdout line; rejects if the process exits first. */
export async function readStartedPorts(child: ChildProcess): Promise<StartedPorts> {
  const line = await firstStdoutLine(child, 'baton');
  const port = (name: string) => Number(new RegExp(`${name}=[^ ]*:(\\d+)`).exec(line)?.[1]);
  return { lockPort: port('lock'), sessionPort: port('session'), httpPort: port('http') };
}
