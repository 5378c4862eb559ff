// The OAuth consent page of the MCP authorization server: an assistant (an MCP client) asks to act as the
// signed-in user; the page shows which client, which tenant and user, and what it may do, and the user
// allows or denies. The server checks the request again on each call (GET describes, POST decides).

import { useMemo } from 'preact/hooks';
import { getJson, session, signOut } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { ErrorBox, useAction, useLoad } from '../ui.tsx';

type Described = Answer<'/api/v3/mcp/oauth/authorization'>;

export function ConsentPage() {
  const request = useMemo(() => Object.fromEntries(new URLSearchParams(location.search)), []);
  const query = location.search;
  const described = useLoad(() => getJson<Described>(`/api/v3/mcp/oauth/authorization${query}`), [query]);
  const action = useAction();
  const decide = (allow: boolean) =>
    action.run(async () => {
      const { redirectTo } = await getJson<Answer<'/api/v3/mcp/oauth/authorization', 'post'>>('/api/v3/mcp/oauth/authorization', {
        method: 'POST',
        json: { request, allow },
      });
      location.assign(redirectTo);
    });
  const d = described.data;
  return (
    <main id="main" class="sign-in consent">
      <section class="consent-card" aria-labelledby="consent-title">
        <h1 id="consent-title">{d ? `Allow ${d.client.name} to use Atrium?` : 'Allow an assistant to use Atrium?'}</h1>
        <ErrorBox error={described.error} />
        {d && (
          <>
            <dl class="consent-who">
              <dt>Tenant</dt>
              <dd>
                {d.tenant.name} <span class="muted">({d.tenant.slug})</span>
              </dd>
              <dt>Signed in as</dt>
              <dd>
                {d.user.userName} <span class="muted">({d.user.roles.join(', ') || 'no roles'})</span>
              </dd>
              <dt>Client</dt>
              <dd>
                {d.client.name}
                <br />
                <span class="muted">returns to {new URL(d.client.redirectUri).origin}</span>
              </dd>
            </dl>
            <h2>It will be able to</h2>
            <ul class="consent-scopes">
              {d.scopes.map((s) => (
                <li key={s.name}>
                  <code>{s.name}</code> {s.description}
                </li>
              ))}
            </ul>
            <p class="muted">It acts with your roles and sees only what you see; tools that change data ask you first in most assistants.</p>
          </>
        )}
        <ErrorBox error={action.error} />
        <div class="consent-actions">
          <button type="button" disabled={!d || action.busy} onClick={() => void decide(true)}>
            Allow
          </button>
          <button type="button" class="secondary" disabled={!d || action.busy} onClick={() => void decide(false)}>
            Deny
          </button>
        </div>
        <p class="muted">
          Not {session()?.userName}?{' '}
          <button type="button" class="link" onClick={() => signOut()}>
            Sign in as someone else
          </button>
        </p>
      </section>
    </main>
  );
}
