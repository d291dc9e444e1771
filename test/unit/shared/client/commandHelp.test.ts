// `dw <command> --help` and `dw help <command>`: each command's usage, in the same words in dw.cjs and dw.py.
import { describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../../../shared/client/commandHelp';
import { dwPy } from '../../../helpers/clientCases';

describe('per-command help', () => {
  it("dw.py has each command's usage in the same words, and every command but mcp (the Node client's only)", () => {
    const { mcp, ...shared } = COMMAND_HELP;
    expect(mcp).toMatch(/^usage: dw mcp /);
    expect(dwPy([['help']])[0]!.ok).toEqual(shared);
  });

  it('starts each with its usage line', () => {
    for (const [cmd, text] of Object.entries(COMMAND_HELP)) expect(text.startsWith(`usage: dw ${cmd}`)).toBe(true);
  });
});
