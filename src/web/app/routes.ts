// Every page of the app and where it lives. Each loads on first visit: the first load ships the shell
// only. The chat view is the thread engineer's (src/web/chat/ChatView.tsx); it is found by a glob so
// the shell builds while that file is still being written.
import { Missing } from './Missing.tsx';
import type { Page, Route } from './router.ts';

const chatViews = import.meta.glob<{ ChatView: Page }>('../chat/ChatView.tsx');

async function chatView(): Promise<Page> {
  const load = chatViews['../chat/ChatView.tsx'];
  if (!load) return Missing;
  return (await load()).ChatView;
}

export const ROUTES: readonly Route[] = [
  { pattern: '/', section: 'chats', load: async () => (await import('../chats/ChatList.tsx')).ChatListPage },
  { pattern: '/chats/new', section: 'chats', load: async () => (await import('../chats/NewChat.tsx')).NewChatPage },
  { pattern: '/hosts/:hostId/chats/:chatId', section: 'chats', load: chatView },
  { pattern: '/hosts', section: 'hosts', load: async () => (await import('../hosts/Hosts.tsx')).HostsPage },
  { pattern: '/hosts/:hostId/sessions/:sessionId', section: 'hosts', load: async () => (await import('../sessions/TerminalSessions.tsx')).TerminalSessionPage },
  { pattern: '/hosts/:hostId', section: 'hosts', load: async () => (await import('../hosts/Host.tsx')).HostPage },
  { pattern: '/pair', section: 'hosts', load: async () => (await import('../hosts/Pair.tsx')).PairPage },
  { pattern: '/teams', section: 'teams', load: async () => (await import('../hosts/Teams.tsx')).TeamsPage },
  { pattern: '/teams/:teamId', section: 'teams', load: async () => (await import('../hosts/Team.tsx')).TeamPage },
  { pattern: '/setup', section: 'none', open: true, load: async () => (await import('./Setup.tsx')).SetupPage },
  { pattern: '/invitations/:token', section: 'none', open: true, load: async () => (await import('../hosts/Invitation.tsx')).InvitationPage },
  { pattern: '/usage', section: 'usage', load: async () => (await import('../usage/UsagePage.tsx')).UsagePage },
  { pattern: '/settings', section: 'settings', load: async () => (await import('../hosts/Settings.tsx')).SettingsPage },
];

/** Loads every page's code without drawing it (the browser and the service worker keep it). */
export async function warmRoutes(): Promise<void> {
  await Promise.allSettled(ROUTES.map((route) => route.load()));
  // Marked on the page, so a test can weigh everything a first visit ships.
  document.documentElement.dataset.warmed = 'true';
}
