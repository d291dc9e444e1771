// A word to paste into a POSIX shell.
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../../../shared/text/shellWord';

describe('shellWord', () => {
  it('leaves plain paths alone and quotes the rest as one word', () => {
    expect(shellWord('/home/me/.config/Dumbwaiter')).toBe('/home/me/.config/Dumbwaiter');
    expect(shellWord('/Users/me/Library/Application Support/Dumbwaiter')).toBe(`'/Users/me/Library/Application Support/Dumbwaiter'`);
    expect(shellWord(`/tmp/it's; rm -rf ~`)).toBe(`'/tmp/it'\\''s; rm -rf ~'`);
  });
});
