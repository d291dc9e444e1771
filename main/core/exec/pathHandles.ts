// A checked path is only a name: a sandbox that can write inside a path root can swap a folder on the
// way for a symlink between our check and the program's open, and the program then works outside the
// root. On Linux the host closes that gap: just before the spawn it opens the checked real path one
// component at a time from "/", never following a link, and hands the program the very object it
// opened as an inherited descriptor, named /dev/fd/N in argv (and the working folder the same way).
// Elsewhere (macOS, Windows, no /proc) the resolved real paths are passed as they are.
import { closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { HAS_PROC_FD, O_PATH } from '../fs/linuxFd';
import type { PathSlot } from '../allowlist/template';

export const CAN_HAND_OVER = HAS_PROC_FD;

// O_PATH: a handle on the object itself, without reading it, so a FIFO or a device never blocks the open.
const HANDLE = O_PATH | constants.O_NOFOLLOW; // libuv adds O_CLOEXEC: only the child's dup2 copies cross exec

/** A checked path no longer names what was checked: the run does not start. */
export class PathChanged extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathChanged';
  }
}

export interface Pinned {
  fd: number;
  /** What is still missing below the pinned folder (empty when the whole path was opened). */
  rest: string[];
  isDir: boolean;
}

/**
 * Opens the absolute, real path `real` one component at a time without following any link. A
 * component that is now a symlink (or a non-folder on the way) throws PathChanged; a missing component
 * stops the walk there, with the deepest folder that exists pinned and the missing names in `rest`.
 */
export function openPinned(real: string): Pinned {
  if (!path.isAbsolute(real) || path.normalize(real) !== real) throw new PathChanged(`${real} is not a real absolute path`);
  const names = real.split(path.sep).filter((n) => n.length > 0);
  let fd = openSync('/', HANDLE | constants.O_DIRECTORY);
  let isDir = true;
  try {
    for (let i = 0; i < names.length; i++) {
      if (!isDir) throw new PathChanged(`${path.join('/', ...names.slice(0, i))} is no longer a folder`);
      let next: number;
      try {
        next = openSync(`/proc/self/fd/${fd}/${names[i]}`, HANDLE);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { fd, rest: names.slice(i), isDir };
        throw e;
      }
      closeSync(fd);
      fd = next;
      const st = fstatSync(fd);
      if (st.isSymbolicLink()) throw new PathChanged(`${path.join('/', ...names.slice(0, i + 1))} became a symlink after it was checked`);
      isDir = st.isDirectory();
    }
    return { fd, rest: [], isDir };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

export const MAX_HANDLES = 256;

export interface HandedOver {
  argv: string[];
  cwd: string;
  /** Child descriptors from 3 on, for spawn's stdio array: entry i becomes the child's fd 3 + i. */
  fds: number[];
  /** Closes the host's copies: right after the spawn. */
  close(): void;
}

/** How the program names a pinned object it inherits as descriptor `n`. */
function nameOf(n: number, p: Pinned): string {
  if (p.rest.length > 0) return `/dev/fd/${n}/${p.rest.join('/')}`; // not there yet: created in the pinned folder
  return p.isDir ? `/dev/fd/${n}/.` : `/dev/fd/${n}`; // "/." so that a folder is listed, not the link
}

/**
 * The argv and cwd to spawn with: every checked path in argv (`paths`) replaced by a handle on the
 * object it named when this is called, and the working folder pinned the same way. Where the OS has
 * no such handles, argv and cwd as they are.
 */
export function handOver(argv: string[], paths: PathSlot[], cwd: string, cwdShared = false): HandedOver {
  if (!CAN_HAND_OVER) return { argv, cwd, fds: [], close() {} };
  // Each path costs the daemon a descriptor until the spawn: a request's long array of paths must
  // not use up the daemon's own (its limit is often 1024).
  if (paths.length > MAX_HANDLES) throw new Error(`this run names ${paths.length} paths; at most ${MAX_HANDLES} can be handed to a program`);
  const pins: Pinned[] = [];
  const close = () => {
    for (const p of pins.splice(0)) closeSync(p.fd);
  };
  try {
    const out = [...argv];
    // Right to left within an element, so that earlier offsets still hold after a replacement.
    const ordered = [...paths].sort((a, b) => a.element - b.element || b.start - a.start);
    for (const slot of ordered) {
      const el = out[slot.element]!;
      const real = el.slice(slot.start, slot.end);
      const pin = openPinned(real);
      pins.push(pin);
      // A name the program would open by name is one the sandbox can make a link meanwhile: only the last
      // name of a path to create may be missing, never a folder on the way, nor a file that was checked.
      if (pin.rest.length > 1) throw new PathChanged(`${path.dirname(real)} is missing: only the last name of a path may be created`);
      if (pin.rest.length === 1 && !slot.may_be_missing) throw new PathChanged(`${real} no longer exists (it was there when checked)`);
      out[slot.element] = el.slice(0, slot.start) + nameOf(3 + pins.length - 1, pin) + el.slice(slot.end);
    }
    // The working folder is the operation's, not the request's: its symlinks are the author's, unless
    // it is shared with the sandbox, which could swap it for a link to the home: then no link is
    // followed. It is pinned, so that it cannot change between here and the program's start, and
    // handed over: the child changes into it after its descriptors are in place, when the host's own
    // numbers may already name something else.
    const cwdPin = openPinned(cwdShared ? cwd : realpathSync.native(cwd));
    pins.push(cwdPin);
    if (cwdPin.rest.length > 0 || !cwdPin.isDir) throw new PathChanged(`the working folder ${cwd} is gone or no longer a folder`);
    return { argv: out, cwd: `/proc/self/fd/${3 + pins.length - 1}`, fds: pins.map((p) => p.fd), close };
  } catch (e) {
    close();
    throw e;
  }
}
