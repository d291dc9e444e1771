// The architecture's hard rules, enforced by lint: the core never imports Electron, and raw IPC
// (ipcMain, ipcRenderer) stays in main/electron/ipc.ts and preload/.
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

async function lint(rel: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, rel) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the Electron-free boundary', () => {
  it.each(['main/core/daemon/x.ts', 'main/cli/x.ts', 'shared/protocol/x.ts'])('refuses an electron import in %s', async (file) => {
    const problems = await lint(file, "import { app } from 'electron';\nexport const a = app;\n");
    expect(problems.some((p) => p.startsWith('no-restricted-imports'))).toBe(true);
  });

  it('refuses an electron/* import in the core', async () => {
    const problems = await lint('main/core/x.ts', "import { app } from 'electron/main';\nexport const a = app;\n");
    expect(problems.some((p) => p.startsWith('no-restricted-imports'))).toBe(true);
  });

  it('allows Electron in the thin Electron layer', async () => {
    expect(await lint('main/electron/x.ts', "import { app } from 'electron';\nexport const a = app;\n")).toEqual([]);
  });
});

describe('raw IPC in one place', () => {
  it.each([
    ["import { ipcMain } from 'electron';\nexport const i = ipcMain;\n"],
    ["import { ipcRenderer } from 'electron';\nexport const i = ipcRenderer;\n"],
    ["import * as electron from 'electron';\nexport const i = electron.ipcMain;\n"],
  ])('refuses raw IPC elsewhere in the Electron layer: %s', async (code) => {
    const problems = await lint('main/electron/x.ts', code);
    expect(problems.some((p) => /^no-restricted-(imports|syntax)/.test(p) && p.includes('main/electron/ipc.ts'))).toBe(true);
  });

  it('allows it in main/electron/ipc.ts and the preload', async () => {
    expect(await lint('main/electron/ipc.ts', "import { ipcMain } from 'electron';\nexport const i = ipcMain;\n")).toEqual([]);
    expect(await lint('preload/x.ts', "import { ipcRenderer } from 'electron';\nexport const i = ipcRenderer;\n")).toEqual([]);
  });
});
