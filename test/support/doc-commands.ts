/**
 * The shell commands of a documentation page, as a reader would paste them: the first `sh`
 * block under a heading, continuation lines joined, comment-only lines dropped. A trailing
 * comment that starts with a status (`# 403`, `# 410 + Link: …`) is what that command's
 * answer must be.
 */
export interface DocCommand {
  readonly command: string;
  /** The HTTP status the page says the command answers, when it says one. */
  readonly expects?: number;
}

export const shellBlockUnder = (markdown: string, heading: string): string => {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const open = lines.findIndex((l, i) => i > start && /^```(sh|bash)\s*$/.test(l));
  const close = lines.findIndex((l, i) => i > open && l.startsWith('```'));
  if (open < 0 || close < 0) throw new Error(`no sh block under "${heading}"`);
  return lines.slice(open + 1, close).join('\n');
};

export const shellCommands = (block: string): DocCommand[] => {
  const joined = block.replace(/\\\n\s*/g, '');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      // A comment starts at ` #` outside quotes; the commands here never put one in a quoted word.
      const match = /^(.*?)\s+#\s*(.*)$/.exec(line);
      const command = (match ? match[1]! : line).trim();
      const status = match ? /^(\d{3})\b/.exec(match[2]!) : null;
      return status ? { command, expects: Number(status[1]) } : { command };
    });
};

/**
 * One bash script that runs the commands in order (so `export`s carry over) and prints, after
 * each, a marker line with its index and exit code: `@@@<index> <code>`.
 */
export const markedScript = (commands: readonly DocCommand[]): string => commands.map((c, i) => `${c.command}\n__rc=$?; echo; echo "@@@${i} $__rc"`).join('\n');

/** Splits the script's output back into one `{ output, code }` per command. */
export const splitMarked = (stdout: string, count: number): { output: string; code: number }[] => {
  const results: { output: string; code: number }[] = [];
  let rest = stdout;
  for (let i = 0; i < count; i += 1) {
    const marker = new RegExp(`\\n@@@${i} (\\d+)\\n`).exec(rest);
    if (!marker) throw new Error(`command ${i} printed no marker: the script stopped before it`);
    results.push({ output: rest.slice(0, marker.index), code: Number(marker[1]) });
    rest = rest.slice(marker.index + marker[0].length);
  }
  return results;
};
