import type { CancelSignal } from '../db/store.js';

/**
 * Tells when the client of a request leaves before its answer is complete, so the work
 * done for it can be cancelled. A stand-in for an AbortSignal: creating an AbortController
 * and listening on its signal costs about 7 µs, a tenth of everything the service adds to
 * a small REST read, while this costs next to nothing. A real AbortSignal is made only for
 * the APIs that need one (`abortSignal`).
 */
export class ClientGone implements CancelSignal {
  #aborted = false;
  #listeners: (() => void)[] = [];
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** A real AbortSignal that aborts with this one, made on first use. */
  get abortSignal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.#aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at >= 0) this.#listeners.splice(at, 1);
  }

  /** The client has left: every listener is called once, and `abortSignal` aborts. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
    this.#controller?.abort();
  }
}
