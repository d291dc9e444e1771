// The page's uncaught errors and unhandled rejections reach the app's log, in real Chromium, over the
// contract's app.reportError: escaped in the log whatever the page's text holds.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { useLogSink, type LogLevel } from '../../main/core/log';

const lines: { level: LogLevel; scope: string; text: string }[] = [];
let ui: Ui;
beforeAll(async () => {
  // What the app's sink (electron-log) would be given: the lines of this process, as they are written.
  useLogSink({ accepts: () => true, write: (level, scope, text) => void lines.push({ level, scope, text }) });
  ui = await Ui.start({ allowlist: 'version: 1\noperations: []\n', daemon: false });
});
afterAll(async () => {
  useLogSink(null);
  await ui?.close();
});
afterEach(() => {
  lines.length = 0;
});

const fromPage = () => lines.filter((l) => l.scope === 'renderer');

describe("the page's errors", () => {
  it.each(['index.html', 'approval.html'])('logs an uncaught error and an unhandled rejection of %s, escaped', async (pageFile) => {
    await ui.open(pageFile === 'index.html' ? '/settings' : 'r-none', pageFile);
    await ui.page.evaluate(() => {
      setTimeout(() => {
        throw new Error('boom \x1b[2J\u202e[2030-01-01] [info] forged');
      });
      void Promise.reject(new TypeError('left rejected'));
    });
    await expect.poll(() => fromPage().length).toBe(2);
    const [first, second] = [...fromPage()].sort((a, b) => a.text.localeCompare(b.text));
    expect(first).toMatchObject({ level: 'error', text: expect.stringContaining(String.raw`boom \x1b[2J\u202e[2030-01-01] [info] forged`) });
    expect(first!.text).toMatch(/^uncaught error in the page:/);
    expect(second).toMatchObject({ level: 'error', text: expect.stringMatching(/^unhandled rejection in the page: TypeError: left rejected/) });
    // Chromium's own report of the same two (the harness counts them): these are the test's.
    expect(ui.errors.splice(0).every((e) => e.startsWith('page: '))).toBe(true);
  });
});
