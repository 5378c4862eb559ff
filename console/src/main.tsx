// The console's shell: sign-in, then navigation to the pages the user's roles allow.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { hasRole, onSession, type Session, session, signOut } from './api.ts';
import { AppsPage } from './pages/apps.tsx';
import { AutomationPage, AutomationsPage } from './pages/automations.tsx';
import { ConsentPage } from './pages/consent.tsx';
import { CustomTablePage, CustomTablesPage } from './pages/custom-tables.tsx';
import { ExplorerPage } from './pages/explorer.tsx';
import { SchedulePage, SchedulesPage } from './pages/schedules.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { UserFeedPage } from './pages/user-feed.tsx';
import { WebhookEventsPage } from './pages/webhook-events.tsx';
import { WebhookPage, WebhooksPage } from './pages/webhooks.tsx';
import { match, navigate, usePath } from './router.ts';
import './styles.css';
import { applyTheme, installKeyboardNavigation, Link, storedTheme, ThemeToggle } from './ui.tsx';

interface Page {
  path: string;
  title: string;
  /** Any one of these roles shows the page (Administrator shows all); none: every signed-in user. */
  roles: string[];
  routes: { pattern: string; render: (p: Record<string, string>) => preact.JSX.Element }[];
}

const PAGES: Page[] = [
  {
    path: '/explorer',
    title: 'Query explorer',
    roles: ['DataExtractionRead'],
    routes: [
      { pattern: '/explorer', render: () => <ExplorerPage /> },
      { pattern: '/explorer/saved/:id', render: (p) => <ExplorerPage savedId={p.id} /> },
    ],
  },
  {
    path: '/webhooks',
    title: 'Webhooks',
    roles: ['WebhookSubscriptionNavigate'],
    routes: [
      { pattern: '/webhooks', render: () => <WebhooksPage /> },
      { pattern: '/webhooks/:id', render: (p) => <WebhookPage id={p.id} /> },
      // After /webhooks/:id, so that this address is the catalogue, not a subscription.
      { pattern: '/webhooks/events', render: () => <WebhookEventsPage /> },
    ],
  },
  {
    path: '/schedules',
    title: 'Scheduled extraction',
    roles: ['ScheduleRead', 'ScheduleWrite'],
    routes: [
      { pattern: '/schedules', render: () => <SchedulesPage /> },
      { pattern: '/schedules/:id', render: (p) => <SchedulePage id={p.id} /> },
    ],
  },
  {
    path: '/custom-tables',
    title: 'Custom tables',
    roles: ['CustomTablesRead', 'CustomTablesSave'],
    routes: [
      { pattern: '/custom-tables', render: () => <CustomTablesPage /> },
      { pattern: '/custom-tables/:name', render: (p) => <CustomTablePage name={p.name} /> },
    ],
  },
  {
    path: '/automations',
    title: 'Automations',
    roles: ['AutomationGet'],
    routes: [
      { pattern: '/automations', render: () => <AutomationsPage /> },
      { pattern: '/automations/:id', render: (p) => <AutomationPage id={p.id} /> },
    ],
  },
  { path: '/user-feed', title: 'User feed', roles: ['AutomationGet'], routes: [{ pattern: '/user-feed', render: () => <UserFeedPage /> }] },
  { path: '/apps', title: 'Apps and users', roles: ['Administrator'], routes: [{ pattern: '/apps', render: () => <AppsPage /> }] },
];

const CONSENT = '/oauth/consent';

const visible = (s: Session | null, p: Page) => !p.roles.length || p.roles.some((r) => hasRole(s, r));

function App() {
  const [s, setS] = useState(session());
  const path = usePath();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => onSession(setS), []);
  useEffect(() => setMenuOpen(false), [path]);
  const pages = PAGES.filter((p) => visible(s, p));
  useEffect(() => {
    if (s && (path === '/' || path === '/sign-in')) navigate(pages[0]?.path ?? '/explorer');
    if (!s && path !== '/' && path !== CONSENT) navigate('/');
  }, [s, path]);
  let content: preact.JSX.Element | null = null;
  let current: Page | undefined;
  for (const page of pages) {
    for (const r of page.routes) {
      const params = match(r.pattern, path);
      if (params) {
        content = r.render(params);
        current = page;
      }
    }
  }
  useEffect(() => {
    document.title = s && current ? `${current.title} · Atrium console` : 'Atrium console';
  });
  // An MCP client's authorization request: sign in if need be, then the consent page (outside the shell).
  if (path === CONSENT) return s ? <ConsentPage /> : <SignIn />;
  if (!s) return <SignIn />;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Atrium</span>
        <button type="button" class="menu-toggle secondary" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="nav" aria-label="Pages" class={menuOpen ? 'open' : ''}>
          {pages.map((p) => (
            <Link key={p.path} to={p.path} aria-current={current === p ? 'page' : undefined}>
              {p.title}
            </Link>
          ))}
        </nav>
        <ThemeToggle />
        <span class="who" title={s.tenantId}>
          {s.userName} · {s.tenant}
        </span>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {content ?? (
          <section>
            <h1>Not found</h1>
            <p>There is no page at this address, or your roles do not show it.</p>
          </section>
        )}
      </main>
    </div>
  );
}

applyTheme(storedTheme());
installKeyboardNavigation();
render(<App />, document.getElementById('app') as HTMLElement);
