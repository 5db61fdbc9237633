// The app's sections: a tab bar at the bottom of a phone, a rail at the left of a desktop.
const SECTIONS = [
  { id: 'chats', href: '/', label: 'Chats', icon: '💬' },
  { id: 'hosts', href: '/hosts', label: 'Hosts', icon: '🖥' },
  { id: 'teams', href: '/teams', label: 'Teams', icon: '👥' },
  { id: 'settings', href: '/settings', label: 'Settings', icon: '⚙' },
] as const;

export function Nav({ section }: { section: string }) {
  return (
    <nav class="nav" aria-label="Sections">
      <span class="brand" aria-hidden="true">Tether</span>
      {SECTIONS.map((s) => (
        <a key={s.id} href={s.href} aria-current={s.id === section ? 'page' : undefined}>
          <span class="nav-icon" aria-hidden="true">{s.icon}</span>
          <span class="nav-label">{s.label}</span>
        </a>
      ))}
    </nav>
  );
}
