/** One line per message on stderr; `LOG_LEVEL` (debug, info, warn, error) sets the floor. */

const LEVELS = ["debug", "info", "warn", "error"] as const;
type Level = (typeof LEVELS)[number];

const floor = Math.max(0, LEVELS.indexOf((process.env.LOG_LEVEL ?? "info").toLowerCase() as Level));

function write(level: Level, message: string): void {
  if (LEVELS.indexOf(level) >= floor) {
    process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase()} ${message}\n`);
  }
}

export const log = {
  debug: (message: string) => write("debug", message),
  info: (message: string) => write("info", message),
  warn: (message: string) => write("warn", message),
  error: (message: string) => write("error", message),
};
