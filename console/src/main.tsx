/** The console's entry point: completes a sign-in redirect if this load is one, then renders into `#app`. */
import { render } from 'preact';
import { App } from './app.js';
import { completeSignIn } from './auth.js';

const root = document.getElementById('app');
if (root) {
  completeSignIn().then(
    () => render(<App />, root),
    (error: unknown) => render(<App error={error} />, root),
  );
}
