/** A status line for long work: rewritten in place on a terminal, throttled plain lines elsewhere. */
export interface ProgressLine {
  update(text: string): void;
  done(text: string): void;
}

export function createProgressLine(stream: NodeJS.WriteStream, intervalMs = 1000): ProgressLine {
  let last = 0;
  return {
    update(text) {
      const now = Date.now();
      if (now - last < (stream.isTTY ? 100 : intervalMs)) return;
      last = now;
      stream.write(stream.isTTY ? `\r${text}\u001b[K` : `${text}\n`);
    },
    done(text) {
      stream.write(stream.isTTY ? `\r${text}\u001b[K\n` : `${text}\n`);
    },
  };
}
