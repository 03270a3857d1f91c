/**
 * Protects an orchestrator from a batch: at most `limit` config fetches in flight per adapter,
 * and, after the orchestrator answers 429 or 503, a pause every fetch to that adapter waits
 * out (exponential, with full jitter) before it sends again.
 *
 * One gate per adapter per container. A durable execution runs in one invocation at a time,
 * so the cap holds across the whole batch; batches on the same adapter that share a container
 * (local mode) share the cap too.
 */

export interface GateOptions {
  /** Concurrent fetches allowed. */
  readonly limit: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class AdapterGate {
  #limit: number;
  #active = 0;
  #waiting: (() => void)[] = [];
  #pausedUntil = 0;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** Most fetches ever in flight at once (for tests and the benchmark). */
  peak = 0;

  constructor(options: GateOptions) {
    this.#limit = Math.max(1, options.limit);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  set limit(value: number) {
    this.#limit = Math.max(1, value);
    while (this.#active < this.#limit && this.#waiting.length) this.#grant();
  }

  #grant(): void {
    this.#active++;
    this.peak = Math.max(this.peak, this.#active);
    this.#waiting.shift()!();
  }

  /** Runs `fetch` holding a slot, after any pause the orchestrator asked for. */
  async run<T>(fetch: () => Promise<T>): Promise<T> {
    if (this.#active < this.#limit && this.#waiting.length === 0) {
      this.#active++;
      this.peak = Math.max(this.peak, this.#active);
    } else {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      for (let wait = this.#pausedUntil - this.#now(); wait > 0; wait = this.#pausedUntil - this.#now()) await this.#sleep(wait);
      return await fetch();
    } finally {
      this.#active--;
      if (this.#waiting.length && this.#active < this.#limit) this.#grant();
    }
  }

  /** Holds every fetch back for `ms` (the longest pause asked for wins). */
  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
  }
}

const gates = new Map<string, AdapterGate>();

/** The container's gate of an adapter, its limit set to `limit`. */
export const gateFor = (adapter: string, limit: number): AdapterGate => {
  let gate = gates.get(adapter);
  if (!gate) {
    gate = new AdapterGate({ limit });
    gates.set(adapter, gate);
  } else gate.limit = limit;
  return gate;
};

/** Backoff after the `attempt`-th busy answer (1-based): full jitter over 250 ms × 2^(attempt-1), at most 20 s. */
export const backoffMs = (attempt: number, random: () => number = Math.random): number =>
  Math.round(random() * Math.min(20_000, 250 * 2 ** (attempt - 1)));
