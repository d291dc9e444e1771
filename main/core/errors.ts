/** An error whose message is meant for the user as is: the CLI prints it without a stack. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}
