// A probe's report as a person reads it, and when it means the host must not serve the spool.
import { describe, expect, it } from 'vitest';
import { checkLines, probeLines, servingProblem, type ProbeCheck, type ProbeReport } from '../../../../shared/protocol/probe';

const ALL_OK: ProbeCheck[] = [
  { name: 'owner_mode', ok: true, detail: 'yours, mode 700' },
  { name: 'same_filesystem', ok: true, detail: 'tmp/, queue/, claimed/ and results/ are on one filesystem' },
  { name: 'rename', ok: true, detail: 'a rename replaces a file at once' },
  { name: 'fsync_file', ok: true, detail: 'works' },
  { name: 'fsync_dir', ok: true, detail: 'works' },
  { name: 'events', ok: true, detail: 'an event in 3 ms' },
  { name: 'case', ok: true, detail: 'names are case-sensitive' },
  { name: 'free_space', ok: true, detail: '12.0 GiB free' },
];
const report = (checks: ProbeCheck[] = ALL_OK): ProbeReport => ({
  spool: 'work',
  dir: '/srv/work',
  at: '2026-12-01T12:00:00.000Z',
  fs_type: 'ext4',
  events: { delivered: true, latency_ms: 3 },
  case_insensitive: false,
  free_bytes: 12 * 2 ** 30,
  checks,
  verdict: 'ok',
  summary: 'ext4: ok; file events in 3 ms',
});
const failing = (name: ProbeCheck['name'], detail: string) => ALL_OK.map((c) => (c.name === name ? { ...c, ok: false, detail } : c));

describe('probeLines', () => {
  it('the verdict, the summary, the filesystem, then one aligned line per check', () => {
    const lines = probeLines(report(failing('fsync_dir', 'not supported by this filesystem')));
    expect(lines.slice(0, 3)).toEqual(['spool work (/srv/work): ok', '  ext4: ok; file events in 3 ms', '  filesystem: ext4; probed 2026-12-01T12:00:00.000Z']);
    expect(lines).toContain('  FAIL fsync of a folder  not supported by this filesystem');
    expect(lines).toContain('  ok   free space         12.0 GiB free');
    expect(lines.slice(2)).toEqual(checkLines(report(failing('fsync_dir', 'not supported by this filesystem'))));
  });
});

describe('servingProblem', () => {
  it('none for a sound mount, nor for one that is only slow or short of a feature', () => {
    expect(servingProblem(report())).toBeNull();
    expect(servingProblem(report(failing('events', 'no event within 2000 ms')))).toBeNull();
    expect(servingProblem(report(failing('fsync_dir', 'not supported')))).toBeNull();
    expect(servingProblem(null)).toBeNull();
  });

  it('a mount whose folders are on several filesystems, or whose rename is not atomic, is not served, saying how to probe again', () => {
    expect(servingProblem(report(failing('same_filesystem', 'queue/ is on another filesystem')))).toBe(
      'its mount cannot be served safely (one filesystem: queue/ is on another filesystem). Fix it, then probe it again: dumbwaiter spools check work',
    );
    expect(servingProblem(report(failing('rename', 'the file after the rename is the old one')))).toContain('atomic rename: the file after the rename is the old one');
  });

  it('checks that could not run (an unsafe spool: the host checks owner and mode at every use) stop nothing', () => {
    expect(servingProblem(report(failing('rename', 'not run: the spool is not safe to write in (see owner and mode)')))).toBeNull();
  });
});
