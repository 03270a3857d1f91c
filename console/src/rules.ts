/** A device's result rule by rule, DOM-free: the rules its node inherits, each with its outcome in a report. */

/** The parts of a tree node this needs. */
export interface RuleNode<R extends { readonly id: string }> {
  readonly name: string;
  readonly rules: readonly R[];
  readonly children: readonly RuleNode<R>[];
}

/**
 * The rules a device on `nodePath` (`base/wan/pe`) is checked against: every rule from the root
 * down to the node, in that order, each with the path of the node defining it; undefined when
 * the path names no node of this version.
 */
export const inheritedRules = <R extends { readonly id: string }>(root: RuleNode<R>, nodePath: string): { node: string; rule: R }[] | undefined => {
  const names = nodePath.split('/');
  if (names[0] !== root.name) return undefined;
  const chain: RuleNode<R>[] = [root];
  for (const name of names.slice(1)) {
    const child = chain[chain.length - 1]?.children.find((c) => c.name === name);
    if (!child) return undefined;
    chain.push(child);
  }
  return chain.flatMap((node, depth) => node.rules.map((rule) => ({ node: names.slice(0, depth + 1).join('/'), rule })));
};

export type RuleOutcome = 'pass' | 'fail' | 'exempted';

/**
 * Each inherited rule's outcome in a report: `fail` when an issue names it, `exempted` when an
 * exemption covered it, else `pass`; with its issues (a rule can fail at several entries).
 */
export const ruleOutcomes = <R extends { readonly id: string }, I extends { readonly ruleId: string }>(
  rules: readonly { node: string; rule: R }[],
  issues: readonly I[],
  exempted: readonly { readonly ruleId: string }[] = [],
): { node: string; rule: R; outcome: RuleOutcome; issues: I[] }[] =>
  rules.map(({ node, rule }) => {
    const own = issues.filter((issue) => issue.ruleId === rule.id);
    const outcome: RuleOutcome = own.length > 0 ? 'fail' : exempted.some((e) => e.ruleId === rule.id) ? 'exempted' : 'pass';
    return { node, rule, outcome, issues: own };
  });

/** Any JSON value as compact text, for expected and actual values. */
export const jsonText = (value: unknown): string => (value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));

const CONSTRAINTS = ['value', 'pattern', 'oneOf', 'cidr', 'range', 'match', 'ordered', 'allowEmpty', 'strict'] as const;

/** What a rule expects, from whichever constraints it carries (`—` when it only asks for presence or absence). */
export const expectation = (rule: Readonly<Record<string, unknown>>): string =>
  CONSTRAINTS.filter((key) => rule[key] !== undefined)
    .map((key) => (key === 'value' ? jsonText(rule[key]) : `${key}: ${jsonText(rule[key])}`))
    .join('; ') || '—';
