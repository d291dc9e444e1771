// Command-line parsing shared by every command: global options, and usage errors that exit with 2.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export const GLOBAL_OPTIONS = {
  home: { type: 'string' },
  spool: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** A command with subcommands (`keys create NAME`, `approvals list`): its options may come before or
 *  after the subcommand, which is the first word that is not an option or an option's value. */
export function parseSub<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  const { values, positionals } = parse(argv, options);
  const [sub, ...rest] = positionals;
  return { sub, values, positionals: rest };
}

/** Options every command takes, with a value: they may come before the command too. */
const GLOBAL_WITH_VALUE = new Set(Object.entries(GLOBAL_OPTIONS).filter(([, o]) => o.type === 'string').map(([name]) => `--${name}`));
const GLOBAL_FLAGS = new Set(Object.entries(GLOBAL_OPTIONS).flatMap(([name, o]) => (o.type === 'boolean' ? [`--${name}`, ...('short' in o ? [`-${o.short}`] : [])] : [])));

/**
 * The command word and the rest, wherever the global options are (`--home H init`, `init --home H`):
 * the command is the first word that is neither a global option nor its value. Null when there is none.
 */
export function splitCommand(argv: string[]): { cmd: string; rest: string[] } | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (GLOBAL_WITH_VALUE.has(a)) i++;
    else if (GLOBAL_FLAGS.has(a) || [...GLOBAL_WITH_VALUE].some((o) => a.startsWith(`${o}=`))) continue;
    else if (a.startsWith('-') && a !== '-') return null;
    else return { cmd: a, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return null;
}

/** The first option in `argv` that no command takes before its name (none: undefined). */
export function unknownOption(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (GLOBAL_WITH_VALUE.has(a)) i++;
    else if (a.startsWith('-') && !GLOBAL_FLAGS.has(a) && ![...GLOBAL_WITH_VALUE].some((o) => a.startsWith(`${o}=`))) return a;
  }
  return undefined;
}
