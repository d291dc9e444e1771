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
