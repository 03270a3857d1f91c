/** Unified diff text into lines a view can mark up, DOM-free. */

export type DiffLineKind = 'added' | 'removed' | 'hunk' | 'file' | 'context';

/** One line of a unified diff and what it is. */
export interface DiffLine {
  readonly kind: DiffLineKind;
  readonly text: string;
}

/** Classifies each line of a unified diff (`---`/`+++` headers, `@@` hunks, `+`/`-` lines, context). */
export const diffLines = (text: string): DiffLine[] =>
  (text === '' || text === '\n' ? [] : text.replace(/\n$/, '').split('\n')).map((line): DiffLine => {
    if (line.startsWith('+++') || line.startsWith('---')) return { kind: 'file', text: line };
    if (line.startsWith('@@')) return { kind: 'hunk', text: line };
    if (line.startsWith('+')) return { kind: 'added', text: line };
    if (line.startsWith('-')) return { kind: 'removed', text: line };
    return { kind: 'context', text: line };
  });

/** How many lines a diff adds and removes. */
export const diffStats = (lines: readonly DiffLine[]): { added: number; removed: number } => ({
  added: lines.filter((line) => line.kind === 'added').length,
  removed: lines.filter((line) => line.kind === 'removed').length,
});
