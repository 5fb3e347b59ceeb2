/** The command's wait for Ctrl-C. */

/**
 * Resolves on Ctrl-C, SIGTERM or SIGHUP. The listeners stay until then (`on`, not `once`): the
 * emulator's own listener, which ends its browsers, lets a program that listens too go on.
 */
export const interrupted = () =>
  new Promise<string>((resolve) => {
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const on = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, on);
      resolve(signal);
    };
    for (const s of signals) process.on(s, on);
  });
