// The relay's sign-in API: which methods it offers, the tokens a sign-in or refresh answers, who the
// caller is, and their sessions. The relay answers these shapes and the SDK checks them.
import { z } from 'zod';

/** `GET /api/auth/methods`: the ways to sign in to this relay (Access and OIDC only when configured). */
export const SignInMethodsSchema = z.object({
  password: z.boolean(),
  access: z.boolean(),
  oidc: z.boolean(),
});
export type SignInMethods = z.output<typeof SignInMethodsSchema>;

/** What a sign-in (password, setup, invitation, Access, OIDC) or a refresh answers. */
export const SessionTokensSchema = z.object({
  sessionId: z.string().min(1),
  refreshToken: z.string().min(1),
  accessToken: z.string().min(1),
  /** When the access token expires (ms since epoch): refresh before then. */
  expiresAt: z.number(),
  /** Present on a sign-in; a refresh keeps the user it had. */
  userId: z.string().min(1).optional(),
});
export type SessionTokens = z.output<typeof SessionTokensSchema>;

/** `POST /api/auth/refresh`: the refresh token to trade for a new pair (it rotates on every use). */
export const RefreshRequestSchema = z.object({ refreshToken: z.string().min(1).max(200) });

/** `POST /api/auth/oidc/exchange`: the login code an OIDC sign-in ended with, and the app's verifier for it. */
export const LoginCodeExchangeSchema = z.object({ code: z.string().min(1).max(200), verifier: z.string().min(1).max(200) });

/** `GET /api/me`. */
export const MeSchema = z.object({
  id: z.string().min(1),
  email: z.string().nullable(),
  /** Whether someone proved this address (an Access/OIDC sign-in, or the owner's setup); grants by email reach only verified ones. */
  emailVerified: z.boolean(),
  name: z.string(),
  isOwner: z.boolean(),
  createdAt: z.number(),
  sessionId: z.string().min(1),
});
export type Me = z.output<typeof MeSchema>;

/** One of `GET /api/auth/sessions`: a live session of the caller's. */
export const SessionSummarySchema = z.object({
  id: z.string().min(1),
  method: z.string(),
  createdAt: z.number(),
  lastUsedAt: z.number(),
  expiresAt: z.number(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  current: z.boolean(),
});
export type SessionSummary = z.output<typeof SessionSummarySchema>;

export const SessionListSchema = z.object({ sessions: z.array(SessionSummarySchema) });
