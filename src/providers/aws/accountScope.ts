// What every set of AWS clients reaching one account and region shares, whatever identity signs
// their calls: the client-side rate limiters (the account's budget) and the kinds' caches, batchers
// and coalesced lookups (issue 28: one set per account, not per namespace or role).
import type { AdaptiveRateLimiter } from './rateLimiter.ts';
import { ThrottleWindow } from './throttleWindow.ts';

/**
 * Names one thing kept in an {@link AccountScope}, and its type. Make one per thing, once, at
 * module level (it is compared by identity).
 */
export class ScopeKey<T> {
  readonly name: string;
  /** Never set: carries the value's type for {@link AccountScope.memo}. */
  declare readonly type?: T;
  constructor(name: string) {
    this.name = name;
  }
}

/** A value kept in a scope that holds something to let go of (timers) when the scope is released. */
export interface ScopeDisposable {
  dispose(): void;
}

/**
 * One AWS account and region as the operator sees it: the rate limiters by signing name (one budget
 * per account, as AWS counts it), and what the kinds keep per account (see {@link memo}). Clients of
 * several identities (the operator's own, one or more roles) share one scope when they reach the
 * same account and region — except the operator's own identity, whose account is only learnt from
 * STS and which therefore has a scope of its own.
 */
export class AccountScope {
  readonly account: string;
  readonly region: string;
  /** The rate limiters by signing name; created by the first client of each service ({@link addLimiter}). */
  readonly limiters = new Map<string, AdaptiveRateLimiter>();
  /** Calls and throttles per service over the last minutes (the clients' middleware notes each attempt). */
  readonly throttles = new ThrottleWindow();
  private readonly values = new Map<ScopeKey<unknown>, unknown>();
  /** Each limiter's rate as made (the service default), to return to when a budget is lifted. */
  private readonly defaults = new Map<string, number>();
  private budget: Readonly<Record<string, number>> = {};

  constructor(account: string, region: string) {
    this.account = account;
    this.region = region;
  }

  /**
   * The value kept under `key`, made by `make` the first time it is asked for in this scope and
   * the same value afterwards (until {@link release}). `make` must not throw; it may build
   * caches, batchers and lookups that read or write through clients given per call.
   */
  memo<T>(key: ScopeKey<T>, make: () => T): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const value = make();
    this.values.set(key, value);
    return value;
  }

  /**
   * Takes in the first limiter of `service` made for this scope, at its default rate; a budget set
   * for the service applies to it at once. Returns it.
   */
  addLimiter(service: string, limiter: AdaptiveRateLimiter): AdaptiveRateLimiter {
    this.limiters.set(service, limiter);
    this.defaults.set(service, limiter.maxPerSecond);
    const b = this.budget[service];
    if (b !== undefined) limiter.setMaxPerSecond(b);
    return limiter;
  }

  /**
   * Sets the account's budget: the requests per second each named service may take, as a TeamPolicy
   * (or the operator's settings) says; a service not named goes back to its default rate. Applied to
   * the limiters made so far and to those made later. Idempotent.
   */
  setBudget(budget: Readonly<Record<string, number>>): void {
    this.budget = { ...budget };
    for (const [service, limiter] of this.limiters)
      limiter.setMaxPerSecond(this.budget[service] ?? this.defaults.get(service) ?? limiter.maxPerSecond);
  }

  /** The budget set last (requests per second by service; empty: every service at its default). */
  get budgetNow(): Readonly<Record<string, number>> {
    return this.budget;
  }

  /** How many values are kept (for tests and metrics). */
  get size(): number {
    return this.values.size;
  }

  /** Lets go of every kept value, disposing those that can be. Idempotent. */
  release(): void {
    for (const v of this.values.values()) if (isDisposable(v)) v.dispose();
    this.values.clear();
  }
}

function isDisposable(v: unknown): v is ScopeDisposable {
  return typeof v === 'object' && v !== null && typeof (v as { dispose?: unknown }).dispose === 'function';
}
