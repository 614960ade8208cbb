/** Where gathered blocks go: sonic-boom, as `pino.destination` makes it. */
export interface BlockSink {
  write(text: string): boolean;
  flushSync(): void;
}

/**
 * A pino destination that gathers lines into blocks. `flush` hands on what it holds, to be
 * written as every block is; `flushSync` also has the sink write out everything it holds.
 */
export interface LineBlocks {
  write(line: string): boolean;
  flush(): void;
  flushSync(): void;
}

/**
 * Gathers log lines into blocks of about `blockChars` before handing them to `sink`.
 * sonic-boom appends each line to the text it holds and then measures that text's byte
 * length, which copies the whole pending text once per line: with 4 KB blocks, about
 * 2.6 KB of garbage per request line in the bench (docs/performance.md). Joining an array
 * once per block copies each line once.
 */
export function gatherLines(sink: BlockSink, blockChars: number): LineBlocks {
  let lines: string[] = [];
  let chars = 0;
  const pass = () => {
    if (lines.length === 0) return;
    const block = lines.join('');
    lines = [];
    chars = 0;
    sink.write(block);
  };
  return {
    write(line) {
      lines.push(line);
      chars += line.length;
      if (chars >= blockChars) pass();
      return true;
    },
    flush: pass,
    flushSync() {
      pass();
      sink.flushSync();
    },
  };
}
