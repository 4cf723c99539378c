// Which SDK client a cache or lookup shared by an account's identities reads through.

/**
 * An SDK client, or a function answering the one to use now: what a cache shared by every identity
 * of one account reads through (any live identity of the account will do for a read). The
 * function must be cheap and may throw when no identity of the account is left.
 */
export type ClientSource<C extends object> = C | (() => C);

/** The client a source stands for now. May throw (see {@link ClientSource}). */
export function clientOf<C extends object>(source: ClientSource<C>): C {
  return typeof source === 'function' ? source() : source;
}

/**
 * The clients of one service for one account's identities (the roles that sign for it), for the
 * reads of what the account shares: {@link current} answers the client added last that is still
 * live. A client whose identity was let go (its set of clients destroyed) is dropped at the next
 * look.
 */
export class AccountReaders<C extends object> {
  private readonly service: string;
  private readonly clients: { readonly client: C; readonly live: () => boolean }[] = [];

  constructor(service: string) {
    this.service = service;
  }

  /** Adds an identity's client; `live` turns false once its set of clients is destroyed. Idempotent per client. */
  add(client: C, live: () => boolean): void {
    if (this.clients.some((c) => c.client === client)) return;
    this.clients.push({ client, live });
  }

  /** The live client added last; throws when none is left (every identity of the account let go). */
  current(): C {
    for (let i = this.clients.length - 1; i >= 0; i--) {
      const c = this.clients[i];
      if (c === undefined) continue;
      if (c.live()) return c.client;
      this.clients.splice(i, 1);
    }
    throw new Error(
      `no live ${this.service} client is left for this account (the TeamPolicies naming it were deleted)`,
    );
  }
}
