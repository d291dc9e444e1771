// What the host found out about a spool's mount (main/core/spool/probe.ts): kept in the ledger, shown by
// `spools check`, in host.json (verdict, summary, events) and in the app's Settings.

export type ProbeCheckName = 'owner_mode' | 'same_filesystem' | 'rename' | 'fsync_file' | 'fsync_dir' | 'events' | 'case' | 'free_space' | 'apart_from_home';

export interface ProbeCheck {
  name: ProbeCheckName;
  ok: boolean;
  /** Human words: what was found, or why the check failed or could not run. */
  detail: string;
}

export interface ProbeReport {
  spool: string;
  dir: string;
  /** ISO time. */
  at: string;
  /** 'ext4', 'tmpfs', 'btrfs', 'xfs', 'overlay', 'virtiofs', '9p', 'fuse', 'fuse.sshfs', 'nfs', 'smbfs', 'cifs', 'apfs', ... or 'unknown'. */
  fs_type: string;
  events: { delivered: boolean; latency_ms: number | null };
  case_insensitive: boolean;
  free_bytes: number | null;
  checks: ProbeCheck[];
  /** unusable: the daemon cannot serve it safely; degraded: it can, less well (no events: rescan only). */
  verdict: ProbeVerdict;
  /** One line, e.g. "ext4: ok; file events in 3 ms" or "9p: no file events: rescan only (every 1000 ms)". */
  summary: string;
}

export const PROBE_VERDICTS = ['ok', 'degraded', 'unusable'] as const;
export type ProbeVerdict = (typeof PROBE_VERDICTS)[number];

/** What each check is about, in the words shown beside it. */
export const CHECK_TITLES: Record<ProbeCheckName, string> = {
  owner_mode: 'owner and mode',
  same_filesystem: 'one filesystem',
  rename: 'atomic rename',
  fsync_file: 'fsync of a file',
  fsync_dir: 'fsync of a folder',
  events: 'file events',
  case: 'case of names',
  free_space: 'free space',
  apart_from_home: 'apart from home',
};

/** The report as lines for a person (the CLI, docs): the verdict and summary, then one line per check. */
export function probeLines(r: ProbeReport): string[] {
  return [`spool ${r.spool} (${r.dir}): ${r.verdict}`, `  ${r.summary}`, ...checkLines(r)];
}

/** The filesystem and one line per check (what the app shows under the verdict). */
export function checkLines(r: ProbeReport): string[] {
  const width = Math.max(...Object.values(CHECK_TITLES).map((t) => t.length));
  return [`  filesystem: ${r.fs_type}; probed ${r.at}`, ...r.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${CHECK_TITLES[c.name].padEnd(width)}  ${c.detail}`)];
}

/**
 * Why the host must not serve a spool with this probe, or null: its folders are not on one filesystem
 * or a rename there does not replace a file atomically, so a claim or a result could be seen half
 * done. Only checks that ran count: owner and mode the host checks at every use anyway.
 */
export function servingProblem(r: ProbeReport | null): string | null {
  const failed = r?.checks.find((c) => (c.name === 'same_filesystem' || c.name === 'rename') && !c.ok && !c.detail.startsWith('not run'));
  return failed ? `its mount cannot be served safely (${CHECK_TITLES[failed.name]}: ${failed.detail}). Fix it, then probe it again: dumbwaiter spools check ${r!.spool}` : null;
}
