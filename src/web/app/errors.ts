// How a failure reads to a person: the relay's own message (a ProtocolError's), else the error's.
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
