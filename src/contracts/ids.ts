import { z } from 'zod';

/** The longest chat id (a UUID is 36). */
export const CHAT_ID_MAX = 128;

/**
 * A chat's id. Chosen by the client, and then carried as it is: in URL paths, Durable Object names
 * (a room's joins it to its host id with a newline, relay/objects/stubs.ts), D1 rows, logs, and (encoded) the host's file names.
 * So it is 1 to CHAT_ID_MAX visible ASCII characters: no space (a header trims it), no control
 * character (NUL, CR, LF split or end a header), nothing outside ASCII (a header carries bytes, and a
 * lone surrogate is no text at all). UUIDs, slugs and names with dots, dashes and colons fit.
 */
export const ChatIdSchema = z.string().regex(new RegExp(`^[\\x21-\\x7e]{1,${CHAT_ID_MAX}}$`), `not a chat id (1 to ${CHAT_ID_MAX} visible ASCII characters)`);
export type ChatId = z.output<typeof ChatIdSchema>;
