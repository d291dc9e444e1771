// The log as a human reads it (the file in the home, and the console): what the sandbox wrote is
// escaped in every part of a message, strings, errors and objects alike, and a line feed in it can
// never start a line that passes for an entry of its own.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configureLogging, scopedLogger, useLogSink, type LogLevel } from '../../../main/core/log';

// eslint-disable-next-line no-control-regex -- raw controls are what this looks for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-log-'));
const file = path.join(dir, 'dumbwaiter.log');
configureLogging(dir, false);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The log file once it holds `needle`. */
async function logWith(needle: string): Promise<string> {
  await expect.poll(() => existsSync(file) && readFileSync(file, 'utf8').includes(needle)).toBe(true);
  return readFileSync(file, 'utf8');
}

describe('the log', () => {
  const log = scopedLogger('test');

  it('escapes controls and bidi characters in a message, an error and an object', async () => {
    log.warn('op "evil\x1b[2J\u202e"', new Error('file bad\x9b.json\u2066'), { name: 'x\x07\u2028y' });
    const text = await logWith('evil');
    expect(text).not.toMatch(RAW);
    expect(text).toContain(String.raw`op "evil\x1b[2J\u202e"`);
    expect(text).toContain(String.raw`Error: file bad\x9b.json\u2066`);
    expect(text).toContain(String.raw`x\x07\u2028y`);
  });

  it('keeps a line feed but indents what follows it, so no forged entry starts a line', async () => {
    log.info('rejected: no operation "a\n[2030-01-01 00:00:00.000] [info] (intake) forged entry"');
    const lines = (await logWith('forged entry')).split('\n');
    const forged = lines.find((l) => l.includes('forged entry'))!;
    expect(forged).toBe('    [2030-01-01 00:00:00.000] [info] (intake) forged entry"');
    expect(lines.filter((l) => l.startsWith('[')).every((l) => /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[(info|warn|error)\]/.test(l))).toBe(true);
  });

  it('leaves plain text, other scripts and emoji as they are', async () => {
    log.info('plain: C:\\Users\\me Grüße 日本語 👩‍💻');
    expect(await logWith('plain:')).toContain('plain: C:\\Users\\me Grüße 日本語 👩‍💻');
  });

  it('is private to its owner, and renamed to dumbwaiter.old.log once it would pass 10 MiB', () => {
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 11; i++) log.info(`part ${i} ${big}`);
    const old = path.join(dir, 'dumbwaiter.old.log');
    expect(readFileSync(old, 'utf8')).toContain('part 0 x');
    expect(statSync(old).size).toBeLessThanOrEqual(10 * 1024 * 1024);
    const now = readFileSync(file, 'utf8');
    expect(now).toContain('part 10 x');
    expect(now).not.toContain('part 0 x');
  });

  it('goes on logging once a file it could not write can be written again, and says the failure once', () => {
    const blocked = path.join(dir, 'blocked');
    writeFileSync(blocked, 'a file where the logs folder should be');
    const said: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (said.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      configureLogging(blocked, false);
      log.info('lost 1');
      log.info('lost 2');
      rmSync(blocked);
      mkdirSync(blocked);
      log.info('written again');
    } finally {
      process.stderr.write = write;
      configureLogging(dir, false);
    }
    expect(said.filter((l) => l.startsWith('cannot write the log file'))).toHaveLength(1);
    expect(readFileSync(path.join(blocked, 'dumbwaiter.log'), 'utf8')).toContain('written again');
  });
});

describe('the sink', () => {
  const log = scopedLogger('sinktest');

  it('gets each line once, escaped, with its level and scope; the core writer writes nothing meanwhile; null puts it back', async () => {
    const got: [LogLevel, string, string][] = [];
    useLogSink({ accepts: () => true, write: (level, scope, text) => void got.push([level, scope, text]) });
    try {
      log.warn('op "evil\x1b[2J"', new Error('bad\u202e'));
      log.info('a\n[2030-01-01 00:00:00.000] [info] (intake) forged');
    } finally {
      useLogSink(null);
    }
    expect(got[0]![0]).toBe('warn');
    expect(got[0]![1]).toBe('sinktest');
    expect(got[0]![2]).toMatch(/^op "evil\\x1b\[2J" Error: bad\\u202e\n {4}\s+at /);
    expect(got[1]).toEqual(['info', 'sinktest', 'a\n    [2030-01-01 00:00:00.000] [info] (intake) forged']);
    expect(readFileSync(file, 'utf8')).not.toContain('(sinktest)');
    log.info('core writer again');
    expect(await logWith('core writer again')).toContain('(sinktest) core writer again');
  });

  it('formats nothing for a level the sink does not take', () => {
    let formatted = 0;
    const costly = { [Symbol.for('nodejs.util.inspect.custom')]: () => `made ${++formatted}` };
    const got: string[] = [];
    useLogSink({ accepts: (level) => level !== 'info', write: (_l, _s, text) => void got.push(text) });
    try {
      log.info(costly);
      log.error(costly);
    } finally {
      useLogSink(null);
    }
    expect(got).toEqual(['made 1']);
    expect(formatted).toBe(1);
  });
});

