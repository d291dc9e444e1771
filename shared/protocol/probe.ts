// What the host found out about a spool's mount (main/core/spool/probe.ts): kept in the ledger, shown by
// `spools check`, in host.json (verdict, summary, events) and in the app's Settings.

export type ProbeCheckName = 'owner_mode' | 'same_filesystem' | 'rename' | 'fsync_file' | 'fsync_dir' | 'events' | 'case' | 'free_space';

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
  verdict: 'ok' | 'degraded' | 'unusable';
  /** One line, e.g. "ext4: ok; file events in 3 ms" or "9p: no file events: rescan only (every 1000 ms)". */
  summary: string;
}

/** What each check is about, in the words shown beside it. */
const CHECK_TITLES: Record<ProbeCheckName, string> = {
  owner_mode: 'owner and mode',
  same_filesystem: 'one filesystem',
  rename: 'atomic rename',
  fsync_file: 'fsync of a file',
  fsync_dir: 'fsync of a folder',
  events: 'file events',
  case: 'case of names',
  free_space: 'free space',
};

/** The report as lines for a person (the CLI, docs): the verdict and summary, then one line per check. */
export function probeLines(r: ProbeReport): string[] {
  const width = Math.max(...Object.values(CHECK_TITLES).map((t) => t.length));
  return [
    `spool ${r.spool} (${r.dir}): ${r.verdict}`,
    `  ${r.summary}`,
    `  filesystem: ${r.fs_type}; probed ${r.at}`,
    ...r.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${CHECK_TITLES[c.name].padEnd(width)}  ${c.detail}`),
  ];
}
