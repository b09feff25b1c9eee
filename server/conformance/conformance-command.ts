// `baton conformance-server`: loads and checks every vector, serves the kit's control protocol
// until SIGINT/SIGTERM. A bad vector file exits 2 with its name and the vector's id.
import { EXIT_USAGE } from '../../lib/errors.ts';
import { startKitServer } from './kit-server.ts';
import { DEFAULT_VECTOR_DIR, VectorFileError, loadVectors } from './load-vectors.ts';

export interface ConformanceFlags {
  readonly port: number;
  readonly host: string;
  readonly vectors?: string;
}

export async function conformanceServer(flags: ConformanceFlags): Promise<void> {
  let vectors: ReturnType<typeof loadVectors>;
  try {
    vectors = loadVectors(flags.vectors ?? DEFAULT_VECTOR_DIR);
  } catch (error) {
    if (!(error instanceof VectorFileError)) throw error;
    process.stderr.write(`baton conformance-server: bad vector: ${error.message}\n`);
    process.exit(EXIT_USAGE);
  }
  const server = await startKitServer({ host: flags.host, port: flags.port, vectors });
  // Runners in other languages read this exact first line to find the control port.
  process.stdout.write(`conformance server control=${flags.host}:${server.port} vectors=${vectors.length}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
