// The desktop app builds here (Electron's binary cannot run here; its types are checked by tsc):
// main, a sandboxed preload that requires nothing but 'electron', the renderer pages and the clients.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../../scripts/build-app';
import { CSP } from '../../../main/electron/constants';

const out = mkdtempSync(path.join(os.tmpdir(), 'dw-app-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const requires = (file: string) => [...new Set([...readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))];

describe('the app build', () => {
  it('writes every bundle', async () => {
    const files = await buildApp(out);
    for (const f of files) expect(statSync(f).size).toBeGreaterThan(100);
  }, 120_000);

  it('the preload is small and requires only electron (a sandboxed preload can load nothing else)', () => {
    const preload = path.join(out, 'preload', 'index.cjs');
    expect(requires(preload)).toEqual(['electron']);
    expect(statSync(preload).size).toBeLessThan(20_000);
    expect(readFileSync(preload, 'utf8')).toContain('exposeInMainWorld');
    expect(readFileSync(preload, 'utf8')).not.toMatch(/exposeInMainWorld\([^)]*ipcRenderer\)/);
  });

  it('main keeps the native module and electron outside the bundle', () => {
    const r = requires(path.join(out, 'main', 'index.cjs'));
    expect(r).toEqual(expect.arrayContaining(['electron', 'better-sqlite3']));
    expect(r).not.toContain('esbuild');
  });

  it('the pages load only our own scripts, no inline code', () => {
    for (const page of ['index.html', 'approval.html']) {
      const html = readFileSync(path.join(out, 'renderer', page), 'utf8');
      expect(html).not.toMatch(/<script(?![^>]*src=)/);
      expect(html).not.toMatch(/\son[a-z]+=/i);
    }
    expect(CSP).toContain("default-src 'none'");
    expect(CSP).toContain("script-src 'self'");
    expect(CSP).not.toContain('unsafe');
  });
});
