// The line `baton serve` prints on stdout once every port is bound (`lock=host:port session=…
// http=…`), read from a child process: how tests and benchmarks learn the ports a port of 0 chose.
import type { ChildProcess } from 'node:child_process';

export interface StartedPorts {
  lockPort: number;
  sessionPort: number;
  httpPort: number;
}

/** Waits for the first stdout line; rejects if the process exits first. */
export async function readStartedPorts(child: ChildProcess): Promise<StartedPorts> {
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`baton exited early with ${code}`)));
  });
  const port = (name: string) => Number(new RegExp(`${name}=[^ ]*:(\\d+)`).exec(line)?.[1]);
  return { lockPort: port('lock'), sessionPort: port('session'), httpPort: port('http') };
}
