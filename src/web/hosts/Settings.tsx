// (Being written: W1.)
export function SettingsPage() {
  return <section class="page"><h1>Settings</h1></section>;
}
