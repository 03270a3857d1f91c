/**
 * Protects an orchestrator from a batch: at most `limit` config fetches in flight per adapter,
 * and, after the orchestrator answers 429 or 503, a pause every fetch to that adapter waits
 * out (exponential, with full jitter) before it sends again.
 *
 * The gate hands out `limit` slots; a worker holds one while it checks device after device,
 * sending one fetch at a time. A lower limit takes effect as held slots are released.
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

/** What sends a config fetch: `run` sends it when allowed, `pause` holds every fetch to the adapter back. */
export interface FetchGate {
  run<T>(fetch: () => Promise<T>): Promise<T>;
  pause(ms: number): void;
}

/** One of an adapter's slots, held for fetches sent one at a time, until it is released (then it sends nothing). */
export interface HeldSlot extends FetchGate {
  release(): void;
}

export class AdapterGate {
  #limit: number;
  #active = 0;
  #waiting: (() => void)[] = [];
  #pausedUntil = 0;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** Most slots ever held at once (for tests and the benchmark). */
  peak = 0;

  /** Slots held now. */
  get held(): number {
    return this.#active;
  }

  constructor(options: GateOptions) {
    this.#limit = Math.max(1, options.limit);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  set limit(value: number) {
    this.#limit = Math.max(1, value);
    while (this.#active < this.#limit && this.#waiting.length) this.#grant();
  }

  #take(): void {
    this.#active++;
    this.peak = Math.max(this.peak, this.#active);
  }

  #grant(): void {
    this.#take();
    this.#waiting.shift()!();
  }

  #release(): void {
    this.#active--;
    if (this.#waiting.length && this.#active < this.#limit) this.#grant();
  }

  /**
   * Takes a slot, waiting in turn for one, and holds it until `release`: whoever holds it sends
   * one fetch at a time through it (after any pause the orchestrator asked for). A worker that
   * checks device after device holds its slot across them, rather than queueing for one per fetch.
   */
  async hold(): Promise<HeldSlot> {
    if (this.#active < this.#limit && this.#waiting.length === 0) this.#take();
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let held = true;
    return {
      run: (fetch) => (held ? this.#afterPause(fetch) : Promise.reject(new Error('a fetch was sent through a slot already released'))),
      pause: (ms) => this.pause(ms),
      release: () => {
        if (held) this.#release();
        held = false;
      },
    };
  }

  /** Sends `fetch` once no pause is in force (at once when none is). */
  #afterPause<T>(fetch: () => Promise<T>): Promise<T> {
    if (this.#pausedUntil <= this.#now()) {
      try {
        return fetch();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return (async () => {
      for (let wait = this.#pausedUntil - this.#now(); wait > 0; wait = this.#pausedUntil - this.#now()) await this.#sleep(wait);
      return fetch();
    })();
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
export const backoffMs = (attempt: number, random: () => number = Math.random): number => Math.round(random() * Math.min(20_000, 250 * 2 ** (attempt - 1)));
