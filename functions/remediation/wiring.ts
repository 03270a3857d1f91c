/** The remediation store the handlers share: one per container, over the compliance table. */
import type { RemediationStore, RollbackIdsReader } from './model.js';
import { createRemediationStore } from './store.js';

let store: (RemediationStore & RollbackIdsReader) | undefined;

/** The container's remediation store (`COMPLIANCE_TABLE`), created on first use. */
export const remediationStore = (): RemediationStore & RollbackIdsReader => (store ??= createRemediationStore());
