/**
 * The error `run` throws, for a test to look into: it must be an `ErrorClass`. Another
 * error is thrown on, and no error at all fails the test.
 */
export function thrownBy<E extends Error>(
  ErrorClass: abstract new (...args: never[]) => E,
  run: () => unknown,
): E {
  try {
    run();
  } catch (error) {
    if (error instanceof ErrorClass) return error;
    throw error;
  }
  throw new Error(`expected a ${ErrorClass.name}`);
}
