// The host's signing of results and inbox messages, and the verifier the Node client uses, against the
// project's vectors (docs/vectors-host-v1.json), which dw.py and the sh example must pass too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHostDoc, signHostDoc, type HostDocKind } from '../../../../shared/protocol/hostAuth';
import { requestHash } from '../../../../shared/protocol/requestHash';
import { canonicalJson } from '../../../../shared/protocol/canonicalJson';
import { decodeSecret } from '../../../../shared/protocol/sign';

interface Vectors {
  key_file: { key_id: string; secret: string };
  other_key_file: { key_id: string; secret: string };
  request_hash: { about: string; key_id: string; op: string; args_json: string; canonical: string; request_hash: string }[];
  signed: { about: string; kind: HostDocKind; id: string; text: string; file: string }[];
  refused: { about: string; kind: HostDocKind; file: string; why: string }[];
}

const HOST_VECTORS_FILE = path.join(import.meta.dirname, '../../../../docs/vectors-host-v1.json');
const vectors = JSON.parse(readFileSync(HOST_VECTORS_FILE, 'utf8')) as Vectors;
const key = { keyId: vectors.key_file.key_id, secret: decodeSecret(vectors.key_file.secret) };

describe('request hashes', () => {
  it.each(vectors.request_hash)('$about', (v) => {
    const args = JSON.parse(v.args_json) as Record<string, unknown>;
    expect(canonicalJson({ args, key_id: v.key_id, op: v.op })).toBe(v.canonical);
    expect(requestHash(v.key_id, v.op, args)).toBe(v.request_hash);
  });
});

describe('signed host documents', () => {
  it.each(vectors.signed)('the host signs $about to exactly the vector file, and it verifies', (v) => {
    expect(signHostDoc(v.kind, key, v.text)).toBe(v.file);
    const opened = openHostDoc(v.kind, v.file, key);
    expect(opened).toEqual({ ok: true, text: v.text, doc: JSON.parse(v.text) });
    // Old clients read the file as it is: the same document, with one more member.
    expect(JSON.parse(v.file)).toMatchObject({ ...(JSON.parse(v.text) as object), auth: { key_id: key.keyId } });
  });

  it.each(vectors.refused)('refuses $about ($why)', (v) => {
    expect(openHostDoc(v.kind, v.file, key)).toMatchObject({ ok: false, why: v.why });
  });

  it('refuses to sign what is not a JSON object with a member (the prefix would not make JSON)', () => {
    expect(() => signHostDoc('result', key, '{}')).toThrow(/at least one member/);
    expect(() => signHostDoc('result', key, '[1]')).toThrow(/at least one member/);
  });
});
