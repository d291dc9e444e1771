// The hints queue/'s file events give, on a real folder with real events: the names of request files
// that are there, newest first, each forgotten only once it is handed over.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueueWatch } from '../../../../main/core/daemon/queueWatch';
import { scopedLogger } from '../../../../main/core/log';
import { eventually } from '../../../helpers/host';

let dir: string;
let queue: string;
/** Calls for named request files, and for rescans. */
let events: number;
let rescans: number;
let qw: QueueWatch;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-queuewatch-'));
  queue = path.join(dir, 'queue');
  mkdirSync(queue);
  mkdirSync(path.join(dir, 'tmp'));
  events = 0;
  rescans = 0;
  qw = new QueueWatch((rescan) => (rescan ? rescans++ : events++), scopedLogger('test'));
  qw.watch(queue);
});
afterEach(() => {
  qw.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Written as a client writes, renamed into queue/: exactly one event each. */
function put(...names: string[]): void {
  for (const n of names) {
    writeFileSync(path.join(dir, 'tmp', n), '{}');
    renameSync(path.join(dir, 'tmp', n), path.join(queue, n));
  }
}

const noted = (n: number) => eventually(`${n} named request files`, () => (events >= n ? true : undefined));

/** Takes up to `max` named files (all by default). */
function take(max = Infinity): string[] {
  const out: string[] = [];
  qw.takeNamed(() => out.length < max, (e) => out.push(e.name));
  return out;
}

describe('QueueWatch', () => {
  it('hands over named files newest first, and keeps those a call did not reach for the next', async () => {
    put('a.json', 'b.json', 'c.json', 'd.json', 'e.json');
    await noted(5);
    expect(take(2)).toEqual(['e.json', 'd.json']);
    expect(take()).toEqual(['c.json', 'b.json', 'a.json']);
    expect(take()).toEqual([]);
  });

  it('hands them over in the order they came when asked to (outside a flood)', async () => {
    put('c.json', 'a.json', 'b.json');
    await noted(3);
    const out: string[] = [];
    qw.takeNamed(() => true, (e) => out.push(e.name), false);
    expect(out).toEqual(['c.json', 'a.json', 'b.json']);
  });

  it('forgets a name whose file left queue/ (a claim), and asks nothing for it nor for a file that cannot be a request', async () => {
    put('a.json', 'b.json', 'not a request');
    renameSync(path.join(queue, 'a.json'), path.join(dir, 'claimed-a.json')); // gone before its events are seen
    put('c.json');
    await noted(2);
    expect(take()).toEqual(['c.json', 'b.json']);
    expect([events, rescans]).toEqual([2, 0]);
  });

  it('asks for a rescan once more request files were named than it keeps', async () => {
    const names = Array.from({ length: 8200 }, (_, i) => `n-${i}.json`);
    put(...names);
    await eventually('a rescan asked for', () => (rescans > 0 ? true : undefined));
    expect(take()).toHaveLength(8192);
  });

  it('keeps the name of a request through thousands of newer names', async () => {
    put('request.json');
    const junk = Array.from({ length: 3000 }, (_, i) => `j-${i}.json`);
    put(...junk);
    await noted(1 + junk.length);
    const taken = take();
    expect(taken).toHaveLength(1 + junk.length);
    expect(taken.at(-1)).toBe('request.json');
  });
});
