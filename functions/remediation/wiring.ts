/** The remediation store the handlers share: one per container, over the compliance table. */
import type { RemediationStore } from './model.js';
import { createRemediationStore } from './store.js';

let store: RemediationStore | undefined;

/** The container's remediation store (`COMPLIANCE_TABLE`), created on first use. */
export const remediationStore = (): RemediationStore => (store ??= createRemediationStore());
