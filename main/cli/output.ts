// Printing for humans or, with --json, for programs. Everything goes through here, escaped (see
// shared/text/visible): much of what is printed (intents, argv, operation names, audit messages) was
// written by the sandbox, and a terminal would act on its escape sequences.
import { visible, visibleJson, visibleLines } from '../../shared/text/visible';

export function printJson(value: unknown): void {
  process.stdout.write(visibleJson(JSON.stringify(value, null, 2)) + '\n');
}

/** Lines of our own making: their line feeds are kept. A value the sandbox may have written goes
 *  in through `visible` first, so that it cannot make a line of its own. */
export function say(text: string): void {
  process.stdout.write(visibleLines(text) + '\n');
}

/** As `say`, on stderr (notes and errors, so that stdout stays clean for `--json`). */
export function warn(text: string): void {
  process.stderr.write(visibleLines(text) + '\n');
}

export function printTable(rows: string[][]): void {
  if (rows.length === 0) return;
  const cells = rows.map((r) => r.map(visible));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  for (const r of cells) say(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

/**
 * A reader that went away (`dumbwaiter audit | head -1`) ends the command quietly, as for any Unix
 * tool, instead of an unhandled EPIPE with a stack trace. What the command did is already recorded.
 */
export function endQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(process.exitCode ?? 0);
  });
}

export function ago(iso: string | null): string {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}
