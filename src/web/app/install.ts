// Installing the app: Chromium offers `beforeinstallprompt` once, early; it is kept here until the
// person asks to install from Settings. Elsewhere (Safari) the browser's own "Add to Home Screen" does.
import { signal } from '@preact/signals';

interface InstallPrompt extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

export const installPrompt = signal<InstallPrompt | null>(null);
export const installed = signal(matchMedia('(display-mode: standalone)').matches);

addEventListener('beforeinstallprompt', (event) => {
  event.preventDefault(); // shown from Settings, when the person asks
  installPrompt.value = event as InstallPrompt;
});
addEventListener('appinstalled', () => {
  installPrompt.value = null;
  installed.value = true;
});

export async function install(): Promise<void> {
  const prompt = installPrompt.value;
  if (!prompt) return;
  await prompt.prompt();
  if ((await prompt.userChoice).outcome === 'accepted') installPrompt.value = null;
}
