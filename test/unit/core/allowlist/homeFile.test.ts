// The home's allowlist file, read one way for every face: the allowlist, or why it is refused.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHomeAllowlist } from '../../../../main/core/allowlist/homeFile';
import { NO_CONTEXT } from '../../../../main/core/allowlist/roots';

let dir: string;
let file: string;
const ctx = () => ({ spools: [{ name: 'default', dir: path.join(dir, 'spool') }], home: path.join(dir, 'home') });

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-homefile-'));
  file = path.join(dir, 'allowlist.yaml');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readHomeAllowlist', () => {
  it('gives the allowlist the file holds', () => {
    writeFileSync(file, 'version: 1\noperations:\n  - {name: echo, command: [/bin/echo, hi]}\n');
    const read = readHomeAllowlist(file, ctx());
    expect(read.ok && [...read.allowlist.operations.keys()]).toEqual(['echo']);
  });

  it('says why a missing or invalid file is refused, instead of throwing', () => {
    expect(readHomeAllowlist(file, ctx())).toMatchObject({ ok: false, reason: expect.stringContaining('ENOENT') });
    writeFileSync(file, 'version: 1\noperations:\n  - {name: echo}\n');
    expect(readHomeAllowlist(file, ctx())).toMatchObject({ ok: false, reason: expect.stringContaining('command') });
  });

  it("checks the home's spool names only when given the home's context", () => {
    writeFileSync(file, 'version: 1\noperations:\n  - {name: echo, command: [/bin/echo, hi], spools: [work]}\n');
    expect(readHomeAllowlist(file, ctx())).toMatchObject({ ok: false, reason: expect.stringContaining('"work" is not a spool of this home') });
    const read = readHomeAllowlist(file, NO_CONTEXT);
    expect(read.ok && read.allowlist.operations.get('echo')?.spools).toEqual(['work']);
  });
});
