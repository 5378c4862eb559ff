// Sign-in: the tenant (slug or id) and a user's name and password, through POST /api/auth/token.
import { useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { ErrorBox, Field, useAction } from '../ui.tsx';

export function SignIn() {
  // Under /t/{slug}/console the tenant is already named by the address.
  const fromPath = /^\/t\/([^/]+)\//.exec(location.pathname)?.[1] ?? '';
  const [tenant, setTenant] = useState(fromPath);
  const [userName, setUserName] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <main id="main" class="sign-in">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(() => signIn(tenant.trim(), userName.trim(), password));
        }}
      >
        <h1>Sign in to the Atrium console</h1>
        <Field label="Tenant (slug or id)">
          <input name="tenant" required autoComplete="organization" value={tenant} onInput={(e) => setTenant(e.currentTarget.value)} />
        </Field>
        <Field label="User name">
          <input name="username" required autoComplete="username" value={userName} onInput={(e) => setUserName(e.currentTarget.value)} />
        </Field>
        <Field label="Password">
          <input
            name="password"
            type="password"
            required
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <ErrorBox error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
