// A word to paste into a POSIX shell: the command line's hints and the agents' set-up lines.

/** A path (or any argument) as one word for a POSIX shell, quoted only when it needs to be. */
export function shellWord(p: string): string {
  return /^[\w@%+=:,./~-]+$/.test(p) ? p : `'${p.replaceAll("'", `'\\''`)}'`;
}
