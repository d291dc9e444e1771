// Which filesystem a folder lives on: the mount holding it in /proc/self/mountinfo (deepest mount point
// containing it, by path containment, the last of equal depth), the statfs magic number otherwise, and
// macOS's `mount` output. The lines are copied from the test machine's /proc/self/mountinfo.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { fsTypeFromMagic, fsTypeOf, isSharedMount, mountTypeOf, parseMacMount, parseMountinfo } from '../../../../main/core/spool/mountType';

const MOUNTINFO = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334432k,nr_inodes=3083608,mode=755',
  '25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683652k',
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534',
  '28 27 0:25 / /mnt/sandboxing/model_tools_env/v1/python ro,nosuid,nodev,relatime - tmpfs model_tools_unavailable ro,size=4k,mode=755',
  '30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683652k',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

describe('parseMountinfo', () => {
  it('reads the mount point and the type of each line of this machine', () => {
    const mounts = parseMountinfo(MOUNTINFO);
    expect(mounts).toHaveLength(7);
    expect(mounts[0]).toEqual({ mountPoint: '/proc', fsType: 'proc' });
    expect(mounts[3]).toEqual({ mountPoint: '/', fsType: 'ext4' });
    expect(mounts[4]).toEqual({ mountPoint: '/mnt/sandboxing/model_tools_env/v1/python', fsType: 'tmpfs' });
  });

  it('finds the type after the separator whatever number of optional fields come first', () => {
    const line = '36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 shared:7 - fuse.sshfs me@host:/srv rw,user_id=0';
    expect(parseMountinfo(line)).toEqual([{ mountPoint: '/mnt/parent', fsType: 'fuse.sshfs' }]);
  });

  it('unescapes spaces, tabs and backslashes in mount points', () => {
    const line = '90 27 0:50 / /media/My\\040Disk\\011x\\134y rw - 9p share rw,trans=virtio';
    expect(parseMountinfo(line)).toEqual([{ mountPoint: '/media/My Disk\tx\\y', fsType: '9p' }]);
  });

  it('skips lines of another shape', () => {
    expect(parseMountinfo('\ngarbage\n1 2 3 4 5 6 7 8')).toEqual([]);
  });
});

describe('mountTypeOf', () => {
  const mounts = parseMountinfo(MOUNTINFO);

  it('takes the deepest mount point containing the folder', () => {
    expect(mountTypeOf(mounts, '/tmp/dw/spool')).toBe('ext4');
    expect(mountTypeOf(mounts, '/dev/shm/dw/spool')).toBe('tmpfs');
    expect(mountTypeOf(mounts, '/dev/null')).toBe('devtmpfs');
    expect(mountTypeOf(mounts, '/proc')).toBe('proc');
  });

  it('contains by path, not by prefix: /dev/shmx is not inside /dev/shm', () => {
    expect(mountTypeOf(mounts, '/dev/shmx/spool')).toBe('devtmpfs');
    expect(mountTypeOf(mounts, '/procx')).toBe('ext4');
  });

  it('of two mounts on one point, takes the later, which covers the other', () => {
    const twice = parseMountinfo(['25 24 0:23 / /dev/shm rw - tmpfs tmpfs rw', '30 25 0:27 / /dev/shm rw - virtiofs share rw'].join('\n'));
    expect(mountTypeOf(twice, '/dev/shm/spool')).toBe('virtiofs');
  });

  it('says null when no mount holds the folder', () => {
    expect(mountTypeOf(parseMountinfo('22 27 0:21 / /proc rw - proc proc rw'), '/home/me')).toBeNull();
  });
});

describe('parseMacMount', () => {
  it('reads the mount point and the first word in the parentheses', () => {
    const out = [
      '/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)',
      '/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse, protect)',
      '//me@nas/share on /Volumes/My Share (smbfs, nodev, nosuid, mounted by me)',
      'map auto_home on /System/Volumes/Data/home (autofs, automounted, nobrowse)',
    ].join('\n');
    const mounts = parseMacMount(out);
    expect(mounts).toContainEqual({ mountPoint: '/Volumes/My Share', fsType: 'smbfs' });
    expect(mountTypeOf(mounts, '/System/Volumes/Data/Users/me/spool')).toBe('apfs');
    expect(mountTypeOf(mounts, '/Volumes/My Share/spool')).toBe('smbfs');
  });
});

describe('fsTypeFromMagic', () => {
  it('names the magic numbers of the filesystems a spool is found on', () => {
    expect(fsTypeFromMagic(0xef53)).toBe('ext4');
    expect(fsTypeFromMagic(0x01021994)).toBe('tmpfs');
    expect(fsTypeFromMagic(0x9123683e)).toBe('btrfs');
    expect(fsTypeFromMagic(0x58465342)).toBe('xfs');
    expect(fsTypeFromMagic(0x794c7630)).toBe('overlay');
    expect(fsTypeFromMagic(0x6969)).toBe('nfs');
    expect(fsTypeFromMagic(0x517b)).toBe('smbfs');
    expect(fsTypeFromMagic(0xff534d42)).toBe('cifs');
    expect(fsTypeFromMagic(0xfe534d42)).toBe('smb2');
    expect(fsTypeFromMagic(0x01021997)).toBe('9p');
    expect(fsTypeFromMagic(0x65735546)).toBe('fuse');
    expect(fsTypeFromMagic(0x6a656a63)).toBe('virtiofs');
    expect(fsTypeFromMagic(0x2fc12fc1)).toBe('zfs');
    expect(fsTypeFromMagic(BigInt(0xef53))).toBe('ext4');
    expect(fsTypeFromMagic(0x12345678)).toBe('unknown');
  });

  it.skipIf(process.platform !== 'linux' || !existsSync('/dev/shm'))('names what statfs says of this machine\'s /dev/shm, as stat -f does', () => {
    const expected = execFileSync('stat', ['-f', '-c', '%T', '/dev/shm'], { encoding: 'utf8' }).trim();
    expect(fsTypeFromMagic(statfsSync('/dev/shm').type)).toBe(expected);
  });
});

describe('isSharedMount', () => {
  it('knows the mounts shared with a VM or another machine, and no local disk', () => {
    for (const t of ['9p', 'virtiofs', 'fuse', 'fuse.sshfs', 'nfs', 'nfs4', 'smbfs', 'cifs', 'smb2', 'vboxsf']) expect(isSharedMount(t), t).toBe(true);
    for (const t of ['ext4', 'tmpfs', 'btrfs', 'xfs', 'apfs', 'overlay', 'zfs', 'unknown', 'fusex']) expect(isSharedMount(t), t).toBe(false);
  });
});

describe.skipIf(process.platform !== 'linux')('fsTypeOf', () => {
  it('says what findmnt says of the temporary folder', () => {
    const dir = os.tmpdir();
    // findmnt lists every mount stacked on the point, the top one last.
    expect(fsTypeOf(dir)).toBe(execFileSync('findmnt', ['-n', '-o', 'FSTYPE', '--target', dir], { encoding: 'utf8' }).trim().split('\n').at(-1));
  });

  it('says unknown, without throwing, for a folder that does not exist', () => {
    expect(fsTypeOf('/nonexistent/dw-probe')).toBe('unknown');
  });
});
