/**
 * How a device's report is graded. Stated exactly in docs/compliance.md:
 * weights error 2, warning 1, info 0.5; `score` = 100 × (weight of passed rules) / (weight of
 * all rules evaluated), rounded to one decimal, 100 when no rule applies; `grade` is `pass`
 * at 90 or more, `review` at 80 or more, `fail` below. A device whose configuration could not
 * be read gets the grade `error` and no score; one whose device differs from NSO's copy (sync
 * mode `check`) gets `out-of-sync` and no score. A backup batch grades nothing: a device whose
 * configuration it fetched and kept gets `kept` (see docs/compliance.md, "Backups").
 */

export const SEVERITY_WEIGHTS = { error: 2, warning: 1, info: 0.5 } as const;
export type RuleSeverity = keyof typeof SEVERITY_WEIGHTS;

export const GRADES = ['pass', 'review', 'fail', 'error', 'out-of-sync', 'kept'] as const;
export type Grade = (typeof GRADES)[number];

/** Per-severity counts of failed rules, and the count of passed rules. */
export interface RuleTotals {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
  readonly passes: number;
}

export const PASS_THRESHOLD = 90;
export const REVIEW_THRESHOLD = 80;

/** The score of a device given each evaluated rule's severity and outcome. */
export const score = (outcomes: readonly { readonly severity: RuleSeverity; readonly passed: boolean }[]): number => {
  let all = 0;
  let passed = 0;
  for (const o of outcomes) {
    const weight = SEVERITY_WEIGHTS[o.severity];
    all += weight;
    if (o.passed) passed += weight;
  }
  if (all === 0) return 100;
  // Integer arithmetic on tenths: 100 × 2/3 is 66.7, never 66.66666666666667 rounded twice.
  return Math.round((1000 * passed) / all) / 10;
};

/** The grade of a score. */
export const gradeOf = (value: number): Exclude<Grade, 'error' | 'out-of-sync'> =>
  value >= PASS_THRESHOLD ? 'pass' : value >= REVIEW_THRESHOLD ? 'review' : 'fail';

/** Failed rules by severity, and passed rules. */
export const ruleTotals = (outcomes: readonly { readonly severity: RuleSeverity; readonly passed: boolean }[]): RuleTotals => {
  let errors = 0;
  let warnings = 0;
  let infos = 0;
  let passes = 0;
  for (const o of outcomes) {
    if (o.passed) passes++;
    else if (o.severity === 'error') errors++;
    else if (o.severity === 'warning') warnings++;
    else infos++;
  }
  return { errors, warnings, infos, passes };
};
