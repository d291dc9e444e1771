// The architecture's hard rules, enforced by lint: the core never imports Electron, raw IPC
// (ipcMain, ipcRenderer) stays in main/electron/ipc.ts and preload/, shared/ never imports the host,
// and only the lifecycle holds the writer of request states.
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

describe('shared/ below the host', () => {
  it('refuses an import of main/ in shared/ (the sandbox clients and the renderer use it), still refusing Electron there', async () => {
    const problems = await lint('shared/client/x.ts', "import { scopedLogger } from '../../main/core/log';\nexport const l = scopedLogger;\n");
    expect(problems.some((p) => p.includes('may not import the host'))).toBe(true);
    expect((await lint('shared/client/x.ts', "import { app } from 'electron';\nexport const a = app;\n")).some((p) => p.startsWith('no-restricted-imports'))).toBe(true);
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

describe("the one writer of a request's state", () => {
  const writer = (from: string) => `import { RequestStateWriter } from '${from}';\nexport const w = RequestStateWriter;\n`;

  it.each([
    ['main/core/daemon/intake.ts', '../ledger/requestStates'],
    ['main/core/daemon/runner.ts', '../ledger/requestStates'],
    ['main/core/decisions.ts', './ledger/requestStates'],
    ['main/core/hostCore.ts', './ledger/requestStates'],
    ['main/core/ledger/requests.ts', './requestStates'],
    ['main/electron/main.ts', '../core/ledger/requestStates'],
    ['test/unit/core/x.test.ts', '../../../main/core/ledger/requestStates.ts'],
    ['bench/sections/startup.ts', '../../main/core/ledger/requestStates'],
  ])('refuses it in %s', async (file, from) => {
    const problems = await lint(file, writer(from));
    expect(problems.some((p) => p.startsWith('no-restricted-imports') && p.includes('main/core/lifecycle.ts'))).toBe(true);
  });

  it('refuses handing it on by a re-export', async () => {
    const problems = await lint('main/core/ledger/index.ts', "export { RequestStateWriter } from './requestStates';\n");
    expect(problems.some((p) => p.startsWith('no-restricted-imports'))).toBe(true);
  });

  it.each([
    ['main/core/daemon/runner.ts', "export const w = import('../ledger/requestStates');\n"],
    ['main/electron/main.ts', "export const w = import('../core/ledger/requestStates.ts');\n"],
    ['test/unit/core/x.test.ts', "export const w = require('../../../main/core/ledger/requestStates');\n"],
  ])('refuses loading it at run time in %s', async (file, code) => {
    const problems = await lint(file, code);
    expect(problems.some((p) => p.startsWith('no-restricted-syntax') && p.includes('main/core/lifecycle.ts'))).toBe(true);
  });

  it('allows it in main/core/lifecycle.ts, which builds it', async () => {
    expect(await lint('main/core/lifecycle.ts', writer('./ledger/requestStates'))).toEqual([]);
  });
});
