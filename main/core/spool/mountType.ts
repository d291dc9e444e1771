// What kind of filesystem a folder lives on (ext4, tmpfs, virtiofs, 9p, fuse.sshfs, nfs, smbfs, apfs...),
// for the spool probe: shared mounts into a VM or container often deliver no file events for writes
// made on the other side, and some cannot sync a folder, so the daemon and the human need to know.
// Linux: the mount in /proc/self/mountinfo holding the folder (its type with subtype, as the kernel
// reports it), else the statfs magic number; macOS: `/sbin/mount`; elsewhere 'unknown'. Never throws.
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync, statfsSync } from 'node:fs';
import { isInside } from '../allowlist/pathArg';

export interface MountEntry {
  mountPoint: string;
  fsType: string;
}

/** mountinfo escapes space, tab, newline and backslash in paths as \040, \011, \012, \134. */
function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * /proc/self/mountinfo, in order (a later mount on the same point covers an earlier one). A line is
 * `id parent major:minor root mountpoint options [optional fields...] - fstype source superoptions`;
 * a line of another shape is skipped.
 */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-', 6);
    const [mountPoint, fsType] = [f[4], sep > 0 ? f[sep + 1] : undefined];
    if (mountPoint && fsType) out.push({ mountPoint: unescapeOctal(mountPoint), fsType });
  }
  return out;
}

/** macOS `mount` output: `/dev/disk3s1 on /System/Volumes/Data (apfs, local, journaled)`. */
export function parseMacMount(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [, mountPoint, fsType] = / on (.+) \(([^,()]+)[,)]/.exec(line) ?? [];
    if (mountPoint && fsType) out.push({ mountPoint, fsType: fsType.trim() });
  }
  return out;
}

/** The type of the mount holding `realPath`: the deepest mount point containing it, the last listed
 *  of equal depth (it covers the others); null when none does. */
export function mountTypeOf(mounts: MountEntry[], realPath: string): string | null {
  let best: MountEntry | null = null;
  for (const m of mounts) {
    if (!isInside(m.mountPoint, realPath)) continue;
    if (!best || m.mountPoint.length >= best.mountPoint.length) best = m;
  }
  return best?.fsType ?? null;
}

/** statfs f_type magic numbers (linux/magic.h and the filesystems' own headers). */
const MAGIC: ReadonlyMap<number, string> = new Map([
  [0xef53, 'ext4'], // ext2, ext3 and ext4 share it
  [0x01021994, 'tmpfs'],
  [0x9123683e, 'btrfs'],
  [0x58465342, 'xfs'],
  [0x794c7630, 'overlay'],
  [0x6969, 'nfs'],
  [0x517b, 'smbfs'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x01021997, '9p'],
  [0x65735546, 'fuse'],
  [0x6a656a63, 'virtiofs'],
  [0x2fc12fc1, 'zfs'],
  [0x4d44, 'vfat'],
  [0x2011bab0, 'exfat'],
  [0x5346544e, 'ntfs'],
  [0xf2f52010, 'f2fs'],
  [0x858458f6, 'ramfs'],
  [0x73717368, 'squashfs'],
  [0xca451a4e, 'bcachefs'],
  [0x00c36400, 'ceph'],
]);

/** The name of a statfs magic number, or 'unknown'. */
export function fsTypeFromMagic(type: number | bigint): string {
  return MAGIC.get(Number(type)) ?? 'unknown';
}

/** Filesystems shared with a VM or another machine: writes made on the other side may send no file events here. */
export function isSharedMount(fsType: string): boolean {
  return /^(9p|virtiofs|fuse(\..*)?|fuseblk|nfs\d*|smbfs|smb2|smb3|cifs|ceph|vboxsf|vmhgfs(-fuse)?|prl_fs)$/.test(fsType);
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** The filesystem type of the folder `dir` (followed: pass a folder already checked, or a pinned path). */
export function fsTypeOf(dir: string): string {
  const real = readOrNull(() => realpathSync.native(dir));
  if (process.platform === 'linux') {
    const info = readOrNull(() => readFileSync('/proc/self/mountinfo', 'utf8'));
    const fromInfo = info && real ? mountTypeOf(parseMountinfo(info), real) : null;
    if (fromInfo) return fromInfo;
    return readOrNull(() => fsTypeFromMagic(statfsSync(dir).type)) ?? 'unknown';
  }
  if (process.platform === 'darwin' && real) {
    const out = readOrNull(() => execFileSync('/sbin/mount', [], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }));
    return (out && mountTypeOf(parseMacMount(out), real)) || 'unknown';
  }
  return 'unknown';
}
