/**
 * A separate process that writes to the local secrets store, for the concurrency test:
 * `node --import tsx local-secrets-writer.ts <file> <prefix> <count>`.
 */
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';

const [file, prefix, count] = process.argv.slice(2);
if (!file || !prefix || !count) throw new Error('usage: local-secrets-writer <file> <prefix> <count>');
const backend = createLocalBackend({ file, lockTimeoutMs: 20_000 });
for (let i = 0; i < Number(count); i++) {
  await backend.write(`${prefix}/${i}`, { password: `${prefix}-${i}` });
}
