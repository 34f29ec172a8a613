/** What a launcher prints: its own tagged lines, its children's prefixed lines, the banner. */

export interface LauncherConsole {
  paint: (code: number, s: string) => string;
  say: (msg: string) => void;
  warn: (msg: string) => void;
  /** A child's output line, prefixed with its name in its colour. */
  child: (name: string, line: string, stderr: boolean) => void;
  /** The "is running" box: a title and its lines between two rules. */
  banner: (title: string, lines: string[]) => void;
}

/** `tag` e.g. "dev"; `colors` per child name, `otherColor` for the rest (ANSI codes). */
export function launcherConsole(tag: string, colors: Record<string, number>, otherColor: number): LauncherConsole {
  const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
  const paint = (code: number, s: string) => (useColor ? `\u001b[${code}m${s}\u001b[0m` : s);
  return {
    paint,
    say: (msg) => process.stdout.write(`${paint(1, `[${tag}]`)} ${msg}\n`),
    warn: (msg) => process.stderr.write(`${paint(33, `[${tag}]`)} ${msg}\n`),
    child: (name, line, stderr) =>
      (stderr ? process.stderr : process.stdout).write(`${paint(colors[name] ?? otherColor, `[${name}]`)} ${line}\n`),
    banner: (title, lines) => {
      const rule = '─'.repeat(72);
      process.stdout.write(['', rule, paint(1, ` ${title}`), ...lines, rule, ''].join('\n'));
    },
  };
}
