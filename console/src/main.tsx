/** The console's entry point: renders the application into the page's `#app` element. */
import { render } from 'preact';

const root = document.getElementById('app');
if (root) render(<p>Loading…</p>, root);
