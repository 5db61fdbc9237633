// What a failed D1 statement says. drizzle wraps every failure in a DrizzleQueryError whose message is
// the SQL and its parameters (which may hold password hashes, emails and token hashes) and not D1's own
// reason, which it keeps as `cause`. Logs and checks read the reason, never the parameters.
import { DrizzleQueryError } from 'drizzle-orm';

/** D1's own reason for a failure (through drizzle's wrapper), for logs and checks; any other error as it is. */
export function failureText(error: unknown): string {
  return String(error instanceof DrizzleQueryError ? (error.cause ?? 'D1 query failed') : error);
}

/** Whether a write failed on a UNIQUE constraint (an email already in use, say). */
export function isUniqueViolation(error: unknown): boolean {
  return failureText(error).includes('UNIQUE');
}
