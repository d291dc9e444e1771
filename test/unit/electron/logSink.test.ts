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

  it('follows every change to the transports made after it was made: levels lowered and raised again, a transport added or taken away', () => {
    const file2 = path.join(dir, 'changes.log');
    const logger = log.create({ logId: 'sink-changes' });
    const sink = electronLogSink(logger, file2);
    const taken = () => (['error', 'warn', 'info'] as const).filter((l) => sink.accepts(l));
    expect(taken()).toEqual(['error', 'warn', 'info']);
    logger.transports.appFile!.level = 'error';
    expect(taken()).toEqual(['error', 'warn']); // the console keeps warnings
    logger.transports.console.level = false;
    expect(taken()).toEqual(['error']);
    const lines: string[] = [];
    logger.transports.extra = Object.assign((m: { data: unknown[] }) => void lines.push(m.data.join(' ')), { level: 'info' as const, transforms: [] });
    expect(taken()).toEqual(['error', 'warn', 'info']);
    logger.transports.appFile!.level = 'info';
    // A line the file and another transport take goes to both.
    sink.write('info', 'runner', 'to both');
    expect(lines).toEqual(['to both']);
    expect(readFileSync(file2, 'utf8')).toMatch(/\[info\] {2}\(runner\)\s* to both/);
    logger.transports.extra = null;
    logger.transports.appFile!.level = 'warn';
    expect(taken()).toEqual(['error', 'warn']);
    logger.transports.appFile!.level = false;
    expect(taken()).toEqual([]);
  });
});
