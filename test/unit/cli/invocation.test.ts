// How the command line tells the user to run it again: the bare name only where it is on PATH.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandName } from '../../../main/cli/invocation';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-invocation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function binDir(name: string, file: string | null, mode = 0o755): string {
  const d = path.join(dir, name);
  mkdirSync(d);
  if (file) {
    writeFileSync(path.join(d, file), '#!/bin/sh\n');
    chmodSync(path.join(d, file), mode);
  }
  return d;
}

describe('commandName', () => {
  it('is the bare name when an executable dumbwaiter is on PATH', () => {
    const PATH = [binDir('empty', null), binDir('global', 'dumbwaiter')].join(path.delimiter);
    expect(commandName({ PATH }, 'linux')).toBe('dumbwaiter');
  });

  it('goes through npx when none is on PATH, or the one there cannot be run', () => {
    expect(commandName({ PATH: binDir('none', null) }, 'linux')).toBe('npx dumbwaiter');
    expect(commandName({ PATH: binDir('not-executable', 'dumbwaiter', 0o644) }, 'linux')).toBe('npx dumbwaiter');
    expect(commandName({}, 'linux')).toBe('npx dumbwaiter');
  });

  it("goes through npx when the only one is in a project's node_modules/.bin, which npx put on PATH", () => {
    const bin = path.join(dir, 'project', 'node_modules', '.bin');
    mkdirSync(path.dirname(bin), { recursive: true });
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'dumbwaiter'), '#!/bin/sh\n', { mode: 0o755 });
    expect(commandName({ PATH: bin }, 'linux')).toBe('npx dumbwaiter');
  });

  it('finds the Windows shims by PATHEXT', () => {
    const PATH = binDir('win', 'dumbwaiter.cmd');
    expect(commandName({ PATH, PATHEXT: '.COM;.EXE;.CMD' }, 'win32')).toBe('dumbwaiter');
    expect(commandName({ PATH, PATHEXT: '.EXE' }, 'win32')).toBe('npx dumbwaiter');
  });
});
