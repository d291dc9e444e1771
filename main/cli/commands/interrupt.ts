// Waiting in a command that runs until it is told to stop (`logs --follow`, `approvals watch`): Ctrl-C
// or SIGTERM ends the wait at once, and the command ends as it would at its own end (the service
// closed, no stack trace), instead of the process dying in the middle of a write.
export interface Interrupt {
  /** Whether Ctrl-C (or SIGTERM) came. */
  readonly stopped: boolean;
  /** Resolves after `ms`, or at once when a signal comes (one pause at a time). */
  pause(ms: number): Promise<void>;
  /** Resolves when a signal comes. */
  readonly signalled: Promise<void>;
  /** Gives the signals back to their defaults. */
  release(): void;
}

export function onInterrupt(): Interrupt {
  let stopped = false;
  let endPause: (() => void) | null = null;
  let signal = () => {};
  const signalled = new Promise<void>((resolve) => {
    signal = resolve;
  });
  const stop = () => {
    stopped = true;
    endPause?.();
    signal();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return {
    get stopped() {
      return stopped;
    },
    signalled,
    pause: (ms) =>
      new Promise<void>((resolve) => {
        if (stopped) return resolve();
        const done = () => {
          clearTimeout(timer);
          endPause = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        endPause = done;
      }),
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
