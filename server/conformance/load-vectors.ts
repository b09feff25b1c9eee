// Reads conformance/vectors/*.json and checks every vector before any is played: the shape (zod),
// ids unique and prefixed by their file's area, and references that must resolve (nodes, call
// ids). A bad file throws VectorFileError naming the file and the vector.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodesOf, vectorFileSchema, vectorSchema } from './vector-schema.ts';
import type { LoadedVector, Vector } from './vector-schema.ts';

export class VectorFileError extends Error {}

/** The vectors shipped with Baton. */
export const DEFAULT_VECTOR_DIR = fileURLToPath(new URL('../../conformance/vectors', import.meta.url));

export function loadVectors(dir: string = DEFAULT_VECTOR_DIR): LoadedVector[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort();
  } catch (error) {
    throw new VectorFileError(`cannot read vector directory ${dir}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (names.length === 0) throw new VectorFileError(`no *.json vector files in ${dir}`);
  const out: LoadedVector[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    for (const vector of loadFile(join(dir, name), name)) {
      const other = seen.get(vector.id);
      if (other !== undefined) throw new VectorFileError(`${name}: vector ${vector.id}: id already used in ${other}`);
      seen.set(vector.id, name);
      out.push(vector);
    }
  }
  return out;
}

function loadFile(path: string, name: string): LoadedVector[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new VectorFileError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const file = vectorFileSchema.safeParse(raw);
  if (!file.success) throw new VectorFileError(`${name}: ${describeIssues(file.error.issues)}`);
  return file.data.vectors.map((candidate, index) => {
    const idText = typeof candidate === 'object' && candidate !== null && 'id' in candidate ? String(candidate.id) : `#${index}`;
    const parsed = vectorSchema.safeParse(candidate);
    if (!parsed.success) throw new VectorFileError(`${name}: vector ${idText}: ${describeIssues(parsed.error.issues)}`);
    const problem = checkReferences(parsed.data, file.data.area);
    if (problem !== undefined) throw new VectorFileError(`${name}: vector ${idText}: ${problem}`);
    return { ...parsed.data, protocol: file.data.protocol, file: name };
  });
}

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(top)'}: ${issue.message}`)
    .join('; ');
}

/** What zod cannot see: names that must point at something. Undefined when all is well. */
function checkReferences(vector: Vector, area: string): string | undefined {
  if (!vector.id.startsWith(`${area}/`)) return `id must start with "${area}/"`;
  const nodes = new Set(nodesOf(vector));
  for (const address of vector.client.options.addresses ?? []) {
    if (!nodes.has(address)) return `client address ${address} is not a node`;
  }
  for (const [index, step] of vector.server.entries()) {
    const texts = 'send' in step ? [step.send] : 'send_raw' in step ? [step.send_raw] : 'expect' in step ? [step.expect] : [];
    if (('accept' in step || 'expect' in step) && step.node !== undefined && !nodes.has(step.node)) return `server step ${index}: no node ${step.node}`;
    for (const text of texts) {
      for (const match of text.matchAll(/\{node:([a-z0-9]+)\}/g)) {
        if (!nodes.has(match[1] ?? '')) return `server step ${index}: {node:${match[1]}} names no node`;
      }
    }
  }
  const calls = new Set<string>();
  for (const [index, step] of vector.client.steps.entries()) {
    if ('call' in step) {
      if (calls.has(step.id)) return `client step ${index}: call id ${step.id} used twice`;
      if (step.call === 'release' && !calls.has(step.of)) return `client step ${index}: release of unknown call ${step.of}`;
      calls.add(step.id);
    }
    if ('await' in step) {
      if (!calls.has(step.await)) return `client step ${index}: await of unknown call ${step.await}`;
      if ((step.outcome === undefined) === (step.outcome_any === undefined)) return `client step ${index}: give outcome or outcome_any`;
    }
    if ('await_lost' in step && !calls.has(step.await_lost)) return `client step ${index}: await_lost of unknown call`;
    if ('not_lost' in step && !calls.has(step.not_lost)) return `client step ${index}: not_lost of unknown call`;
  }
  return undefined;
}
