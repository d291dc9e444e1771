// The host's bundle is ASCII: V8 holds a module's source as long as the process lives, at two bytes a
// character once a single character is not ASCII (the daemon's chunk: 3.4 MB instead of 1.7).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { asciiOnly, buildHost } from '../../../scripts/build-host.mjs';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// eslint-disable-next-line no-control-regex
const notAscii = /[^\x00-\x7f]/;

describe('buildHost', () => {
  it('writes every file of the bundle in ASCII, the comments esbuild keeps included', async () => {
    const out = await buildHost({ distDir: dir });
    const files = readdirSync(out).filter((f) => f.endsWith('.mjs'));
    expect(files).toContain('cli.mjs');
    for (const f of files) expect(notAscii.test(readFileSync(path.join(out, f), 'utf8')), f).toBe(false);
  }, 60_000);
});

describe('asciiOnly', () => {
  it('escapes what is not ASCII as JavaScript does, so that code means the same', async () => {
    const file = path.join(dir, 'm.mjs');
    writeFileSync(file, "// a dash \u2014 kept\nexport const s = 'caf\u00e9 \u{1f600}';\nexport const re = /\u00e9+/;\n");
    asciiOnly(file);
    const text = readFileSync(file, 'utf8');
    expect(notAscii.test(text)).toBe(false);
    expect(text).toContain('// a dash \\u2014 kept');
    const m = (await import(`${file}?${Date.now()}`)) as { s: string; re: RegExp };
    expect(m.s).toBe('caf\u00e9 \u{1f600}');
    expect(m.re.test('\u00e9\u00e9')).toBe(true);
  });
});
