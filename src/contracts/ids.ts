import { z } from 'zod';

// Chosen by the client, so the only promise is "not empty"; hosts encode it
// before it touches a file name.
export const ChatIdSchema = z.string().min(1);
export type ChatId = z.output<typeof ChatIdSchema>;
