// The shell: navigation, the signed-in gate and the page for the URL. On a phone one pane at a time
// with a tab bar; on a desktop the chat list stays beside the open chat.
import { useEffect } from 'preact/hooks';
import { currentUrl, match } from './router.ts';
import { ROUTES } from './routes.ts';
import { LazyPage } from './lazy-page.tsx';
import { Missing } from './Missing.tsx';
import { Nav } from './Nav.tsx';
import { SignIn, finishRedirectSignIn, refusedSwap } from './SignIn.tsx';
import { signedIn } from './session.ts';
import { Icon } from './icons.tsx';

const chatList = ROUTES[0].load;

export function App() {
  useEffect(() => {
    void finishRedirectSignIn();
  }, []);
  const found = match(ROUTES, currentUrl.value);
  if (!signedIn.value && !found?.route.open) return <SignIn />;
  if (!found)
    return (
      <Shell section="none">
        <Missing />
      </Shell>
    );
  const { route, params, query } = found;
  const props = { ...params, query, key: currentUrl.value };
  if (route.section === 'chats' && (route.pattern === '/' || params.chatId)) {
    // Two panes: the list, and the open chat (on a phone only one of them shows; styles.css).
    const open = Boolean(params.chatId);
    return (
      <Shell section="chats" detail={open}>
        <div class="panes">
          <div class="list-pane">
            <LazyPage load={chatList} props={{ query }} />
          </div>
          <div class="detail-pane">
            {open ? (
              <>
                <a class="back-link" href="/" aria-label="Back to chats">
                  <Icon name="back" /> Chats
                </a>
                <LazyPage load={route.load} props={{ hostId: params.hostId, chatId: params.chatId, key: `${params.hostId}/${params.chatId}` }} />
              </>
            ) : (
              <p class="empty-detail">
                Pick a chat, or <a href="/chats/new">start a new one</a>.
              </p>
            )}
          </div>
        </div>
      </Shell>
    );
  }
  return (
    <Shell section={route.section}>
      <LazyPage load={route.load} props={props} />
    </Shell>
  );
}

function Shell({ section, detail = false, children }: { section: string; detail?: boolean; children: preact.ComponentChildren }) {
  if (!signedIn.value)
    return (
      <main id="main" class="signed-out">
        {children}
      </main>
    );
  return (
    <div class="shell" data-section={section} data-detail={detail ? '' : undefined}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Nav section={section} />
      <main id="main" tabIndex={-1}>
        {refusedSwap.value && (
          <p class="notice error" role="alert">
            {refusedSwap.value}{' '}
            <button type="button" onClick={() => (refusedSwap.value = null)}>
              Dismiss
            </button>
          </p>
        )}
        {children}
      </main>
    </div>
  );
}
