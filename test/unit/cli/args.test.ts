// Options as people type them: the global ones before the command, between a command and its
// subcommand, or after; a command's own options before or after its subcommand.
import { describe, expect, it } from 'vitest';
import { parseSub, splitCommand, unknownOption } from '../../../main/cli/args';

describe('splitCommand', () => {
  it('finds the command wherever the global options are, their values never taken for it', () => {
    expect(splitCommand(['--home', 'init', 'init'])).toEqual({ cmd: 'init', rest: ['--home', 'init'] });
    expect(splitCommand(['--home=/h', '--json', 'status'])).toEqual({ cmd: 'status', rest: ['--home=/h', '--json'] });
    expect(splitCommand(['keys', '--home', '/h', 'list'])).toEqual({ cmd: 'keys', rest: ['--home', '/h', 'list'] });
    expect(splitCommand(['--spool', 'work', '-h', 'approvals', 'list'])).toEqual({ cmd: 'approvals', rest: ['--spool', 'work', '-h', 'list'] });
  });

  it('has no command for options alone, or an option no command takes before its name', () => {
    expect(splitCommand(['--home', '/h'])).toBeNull();
    expect(splitCommand([])).toBeNull();
    expect(splitCommand(['--scope', 'write', 'keys'])).toBeNull();
    expect(unknownOption(['--home', '/h', '--scope', 'write'])).toBe('--scope');
    expect(unknownOption(['--home', '--scope'])).toBeUndefined(); // --home's value, odd as it is
  });
});

describe('parseSub', () => {
  it("takes the subcommand wherever the command's options are", () => {
    const opts = { out: { type: 'string' }, force: { type: 'boolean', default: false } } as const;
    for (const argv of [['create', 'k', '--out', 'f'], ['--out', 'f', 'create', 'k'], ['--home', '/h', 'create', '--force', 'k', '--out', 'f']]) {
      const { sub, positionals, values } = parseSub(argv, opts);
      expect(sub).toBe('create');
      expect(positionals).toEqual(['k']);
      expect(values.out).toBe('f');
    }
  });
});
