/** A status line for long work: rewritten in place on a terminal, throttled plain lines elsewhere. */
export interface ProgressLine {
  /** Shows `text` as the current status (at most every 100 ms on a terminal, every `intervalMs` elsewhere). */
  update(text: string): void;
  /** Replaces the status with a last line that stays. */
  done(text: string): void;
  /** Removes the status line from a terminal, so the next message starts clean. */
  clear(): void;
}

export function createProgressLine(stream: NodeJS.WriteStream, intervalMs = 1000): ProgressLine {
  let last = 0;
  let shown = false;
  return {
    update(text) {
      const now = Date.now();
      if (now - last < (stream.isTTY ? 100 : intervalMs)) return;
      last = now;
      shown = stream.isTTY === true;
      stream.write(stream.isTTY ? `\r${text}\u001b[K` : `${text}\n`);
    },
    done(text) {
      shown = false;
      stream.write(stream.isTTY ? `\r${text}\u001b[K\n` : `${text}\n`);
    },
    clear() {
      if (shown) stream.write('\r\u001b[K');
      shown = false;
    },
  };
}
