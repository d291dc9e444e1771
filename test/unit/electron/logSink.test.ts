// The desktop app's sink, on electron-log itself (its Node flavour: the same logger the app uses, without
// Electron): the core's lines land in its file, escaped, scoped, private, and only at the levels its
// transports take.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import log from 'electron-log/node';
import { scopedLogger, useLogSink } from '../../../main/core/log';
import { electronLogSink } from '../../../main/electron/logSink';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-elog-'));
const file = path.join(dir, 'dumbwaiter.log');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('electronLogSink', () => {
  it("writes the core's lines into electron-log's file, escaped and scoped, at the levels its transports take", () => {
    const logger = log.create({ logId: 'sink-test' });
    const sink = electronLogSink(logger, file);
    expect([sink.accepts('error'), sink.accepts('warn'), sink.accepts('info')]).toEqual([true, true, true]);
    // Fewer levels kept, fewer taken (the console keeps warnings).
    logger.transports.appFile!.level = 'warn';
    expect([sink.accepts('error'), sink.accepts('warn'), sink.accepts('info')]).toEqual([true, true, false]);
    logger.transports.console.level = false;
    useLogSink(sink);
    try {
      const intake = scopedLogger('intake');
      intake.warn('refused "op\x1b[2J"\n[2030-01-01 00:00:00.000] [info] forged');
      intake.info('not kept at warn');
    } finally {
      useLogSink(null);
    }
    const lines = readFileSync(file, 'utf8').split(os.EOL).filter(Boolean);
    expect(lines).toHaveLength(2);
    // The line the core's own writer makes.
    expect(lines[0]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[warn\] {2}\(intake\)\s* refused "op\\x1b\[2J"$/);
    expect(lines[1]).toBe('    [2030-01-01 00:00:00.000] [info] forged');
    // What the sandbox wrote is in it: the owner's alone, as the core's own log file is.
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
