// The architecture's one hard rule, enforced by lint: the core never imports Electron.
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

  it('refuses electron-log/main in the core', async () => {
    const problems = await lint('main/core/x.ts', "import log from 'electron-log/main';\nexport const l = log;\n");
    expect(problems.some((p) => p.startsWith('no-restricted-imports'))).toBe(true);
  });

  it('allows Electron in the thin Electron layer', async () => {
    expect(await lint('main/electron/x.ts', "import { app } from 'electron';\nexport const a = app;\n")).toEqual([]);
  });
});
