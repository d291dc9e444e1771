// The benchmark's host processes, on a real process tree: a "daemon" (plain node) with a spawner (a node
// process running a file named spawner.mjs) and, as operations, the children of both: a sleep of each,
// a node child of the daemon that is not the spawner, and a child of the spawner running a file of the
// same name (as a child forked but not yet exec'd looks).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cpuBetween, hostProcesses, treeMemory } from '../../../../bench/lib/procTree';
import { killGroup, track, trackGroup } from '../../../helpers/processes';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-proctree-'));
/** Starts `program args` as a child and prints `role pid`. */
const starter = `import { spawn } from 'node:child_process';
export function start(role, program, args) {
  const c = spawn(program, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  console.log(role, c.pid);
}
`;

let daemon: ChildProcess;
const pids: Record<string, number> = {};

beforeAll(async () => {
  writeFileSync(path.join(dir, 'start.mjs'), starter);
  // A file named like a spawner that only sleeps: the spawner's own child runs it.
  mkdirSync(path.join(dir, 'op'));
  writeFileSync(path.join(dir, 'op', 'spawner.mjs'), 'setInterval(() => {}, 1000);\n');
  writeFileSync(
    path.join(dir, 'spawner.mjs'),
    `import { start } from './start.mjs';
start('spawner_sleep', '/bin/sleep', ['600']);
start('spawner_clone', process.execPath, [${JSON.stringify(path.join(dir, 'op', 'spawner.mjs'))}]);
setInterval(() => {}, 1000);
`,
  );
  writeFileSync(
    path.join(dir, 'daemon.mjs'),
    `import { start } from './start.mjs';
start('spawner', process.execPath, [${JSON.stringify(path.join(dir, 'spawner.mjs'))}]);
start('daemon_sleep', '/bin/sleep', ['600']);
start('daemon_node', process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
setInterval(() => {}, 1000);
`,
  );
  daemon = track(spawn(process.execPath, [path.join(dir, 'daemon.mjs')], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] }));
  trackGroup(daemon.pid!);
  const lines = createInterface({ input: daemon.stdout! });
  await new Promise<void>((resolve) =>
    lines.on('line', (l) => {
      const [role, pid] = l.split(' ');
      pids[role!] = Number(pid);
      if (Object.keys(pids).length === 5) resolve();
    }),
  );
});

afterAll(() => {
  killGroup(daemon.pid!);
  rmSync(dir, { recursive: true, force: true });
});

describe('the host processes (bench/lib/procTree.ts)', () => {
  it('are the daemon and the spawner it started, not the operations of either', () => {
    expect(hostProcesses(daemon.pid!)).toEqual([
      { pid: daemon.pid, role: 'daemon' },
      { pid: pids.spawner, role: 'spawner' },
    ]);
  });

  it('their memory is each one shown and summed', () => {
    const m = treeMemory(daemon.pid!);
    expect(m.processes.map((p) => p.pid)).toEqual([daemon.pid, pids.spawner]);
    expect(m.rss_mib).toBeCloseTo(m.processes[0]!.rss_mib + m.processes[1]!.rss_mib, 6);
    // Shared pages (node's own) count once in the Pss sum, in each process in the RSS sum.
    expect(m.pss_mib).toBeGreaterThan(0);
    expect(m.pss_mib).toBeLessThan(m.rss_mib);
  });
});

describe('CPU between two readings', () => {
  it('counts a process that started in between from zero, and what the others used meanwhile', () => {
    const before = { byPid: new Map([[1, { role: 'daemon' as const, user: 100, sys: 50 }]]) };
    const after = {
      byPid: new Map([
        [1, { role: 'daemon' as const, user: 130, sys: 60 }],
        [2, { role: 'spawner' as const, user: 5, sys: 5 }],
      ]),
    };
    expect(cpuBetween(before, after)).toEqual({
      user: 35,
      sys: 15,
      processes: [
        { pid: 1, role: 'daemon', ms: 40 },
        { pid: 2, role: 'spawner', ms: 10 },
      ],
    });
  });
});
