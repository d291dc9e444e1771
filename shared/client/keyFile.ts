// Key files: what a sandbox is given to sign its requests.
import { readFileSync } from 'node:fs';
import { isKeyId } from '../protocol/ids';
import { decodeSecret } from '../protocol/sign';
import type { KeyFile } from '../protocol/types';

export class KeyFileError extends Error {}

export function parseKeyFile(text: string, where = 'key file'): KeyFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new KeyFileError(`${where} is not JSON`);
  }
  const k = raw as Partial<KeyFile>;
  if (typeof raw !== 'object' || raw === null || k.v !== 1) throw new KeyFileError(`${where} is not a Dumbwaiter key file (v 1)`);
  if (typeof k.key_id !== 'string' || !isKeyId(k.key_id)) throw new KeyFileError(`${where} has no valid key_id`);
  if (typeof k.secret !== 'string') throw new KeyFileError(`${where} has no secret`);
  try {
    decodeSecret(k.secret);
  } catch (e) {
    throw new KeyFileError(`${where}: ${(e as Error).message}`);
  }
  return { v: 1, key_id: k.key_id, secret: k.secret };
}

export function loadKeyFile(file: string): KeyFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KeyFileError(`cannot read the key file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parseKeyFile(text, file);
}
