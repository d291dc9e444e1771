// Two Linux facilities that let the host act on the very object it looked at, not on a name the
// sandbox can change meanwhile: O_PATH, a descriptor that names an inode without opening it (no read
// permission needed; a FIFO or a device is not opened, so nothing waits and no driver runs), and
// /proc/self/fd/N, a name the kernel resolves to a descriptor's object whatever its path now holds.
// Elsewhere (macOS, Windows, a Linux without /proc) callers use the plain paths.
import { existsSync } from 'node:fs';

/** Linux's O_PATH: Node does not export it; libuv passes open flags through. Linux only. */
export const O_PATH = 0o10000000;

/** Whether /proc/self/fd/N reaches the object of descriptor N (Linux with /proc mounted). */
export const HAS_PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');
