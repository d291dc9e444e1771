/** What a caller may decide on, rather than on a message's words. */
export type UserErrorCode = 'home_locked';

/** An error whose message is meant for the user as is: the CLI prints it without a stack. `code`
 *  names the few cases a caller acts on (the desktop app, when the command line's daemon holds the home). */
export class UserError extends Error {
  constructor(
    message: string,
    readonly code: UserErrorCode | null = null,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
