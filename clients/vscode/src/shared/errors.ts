/** The message of anything thrown (Error or not), for the user and the log. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
