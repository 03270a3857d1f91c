/** The console's pages by hash address (`#/batches/b-1`): parsing and building them, DOM-free. */

/** One page of the console and its parameters. */
export type Route =
  | { readonly page: 'overview' }
  | { readonly page: 'batches' }
  | { readonly page: 'batch'; readonly batchId: string }
  | { readonly page: 'device'; readonly batchId: string; readonly device: string }
  | { readonly page: 'trees' }
  | { readonly page: 'tree'; readonly treeId: string }
  | { readonly page: 'adapters' }
  | { readonly page: 'applications' }
  | { readonly page: 'plan'; readonly planId: string }
  | { readonly page: 'remediation'; readonly remediationId: string }
  | { readonly page: 'not-found'; readonly hash: string };

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** The route of a location hash (`''`, `#/`, `#/trees/t1`); anything else is `not-found`. */
export const parseRoute = (hash: string): Route => {
  const raw = hash.replace(/^#\/?/, '').replace(/\/$/, '');
  const parts = raw === '' ? [] : raw.split('/').map(decode);
  if (parts.some((part) => part === undefined || part === '')) return { page: 'not-found', hash };
  const [first, second, third, fourth] = parts as string[];
  switch (parts.length) {
    case 0:
      return { page: 'overview' };
    case 1:
      if (first === 'batches' || first === 'trees' || first === 'adapters' || first === 'applications') return { page: first };
      break;
    case 2:
      if (first === 'batches') return { page: 'batch', batchId: second as string };
      if (first === 'trees') return { page: 'tree', treeId: second as string };
      if (first === 'plans') return { page: 'plan', planId: second as string };
      if (first === 'remediations') return { page: 'remediation', remediationId: second as string };
      break;
    case 4:
      if (first === 'batches' && third === 'devices') return { page: 'device', batchId: second as string, device: fourth as string };
      break;
  }
  return { page: 'not-found', hash };
};

/** The hash address of a page, e.g. `href('batches', id, 'devices', name)` → `#/batches/<id>/devices/<name>`. */
export const href = (...segments: string[]): string => `#/${segments.map(encodeURIComponent).join('/')}`;

/**
 * How each version of a tree summary is addressed: its label, and `label~N` for the N-th repeat of
 * a label (docs/trees.md, "Repeated labels"), in stored order.
 */
export const versionAddresses = (labels: readonly string[]): { label: string; address: string }[] => {
  const seen = new Map<string, number>();
  return labels.map((label) => {
    const count = (seen.get(label) ?? 0) + 1;
    seen.set(label, count);
    return { label, address: count === 1 ? label : `${label}~${count}` };
  });
};
