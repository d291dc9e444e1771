// A process that keeps its memory map busy, so that reading its /proc/<pid>/environ waits (tens of
// seconds a read): one thread maps a huge read-only range with MAP_POPULATE (the kernel fills its page
// tables holding the map's lock for reading, seconds at a time), another maps and unmaps a huge range
// (a writer queued behind it, which every new reader then waits behind). It runs niced, so that it takes
// little of the machine's time, and writes its pid once both threads are going (made beforehand: the
// write must not need memory, which waits on that lock too). In Python with ctypes.
import { spawnSync } from 'node:child_process';

export const STALLER_PY = `
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PROT_READ, MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE, MAP_POPULATE = 1, 0x02, 0x20, 0x4000, 0x8000
FAILED = ctypes.c_void_p(-1).value
go = threading.Event()
def loop(size, flags):
    go.wait()
    while True:
        p = libc.mmap(None, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0)
        if p not in (None, FAILED):
            libc.munmap(p, size)
ready = b'%d\\n' % os.getpid()
threads = [threading.Thread(target=loop, args=a, daemon=True) for a in ((1 << 35, MAP_POPULATE), (1 << 40, 0))]
for t in threads:
    t.start()
go.set()
time.sleep(0.2)
os.write(1, ready)
threads[0].join()
`;

/** An ordinary user to run the staller as, when this runs as root (CI): the host reads any uid's
 *  processes then. Null when not root (it runs as this user) or when setpriv is missing. */
const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

/** The command (argv) that runs the staller on Linux: as nobody when root; a python3 that user can run.
 *  Null, with why, where it cannot run. */
export function stallerCommand(): { argv: string[] } | { why: string } {
  if (process.platform !== 'linux') return { why: 'the staller needs Linux (/proc and its mmap flags)' };
  const root = process.getuid?.() === 0;
  if (root && spawnSync(AS_NOBODY[0]!, [...AS_NOBODY.slice(1), 'true']).status !== 0) return { why: 'no setpriv to run the staller as an ordinary user' };
  const wrap = root ? AS_NOBODY : [];
  // A python3 under root's home (pyenv, say) is not nobody's to run: the system's first.
  const python = ['/usr/bin/python3', '/usr/local/bin/python3', 'python3'].find((p) => spawnSync(wrap[0] ?? p, [...wrap.slice(1), ...(wrap.length ? [p] : []), '-c', 'import ctypes']).status === 0);
  if (python === undefined) return { why: 'no python3 with ctypes to run the staller' };
  // One line (an allowlist's command holds it): the program as a Python string literal.
  return { argv: [...wrap, 'nice', '-n', '19', python, '-c', `exec(${JSON.stringify(STALLER_PY)})`] };
}
