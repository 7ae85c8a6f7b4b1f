/**
 * A claim's time read as its statement goes to the server, not when the call is made: a
 * claim that first waited for a free connection (every client busy with long mutations)
 * would otherwise start its attempts with leases already partly spent and record rate-limit
 * starts in the past. pg turns a parameter with `toPostgres()` into text when it binds the
 * statement on the connection that runs it, so the clock is read there.
 */
import { claimAt, type ClaimAt, type ClaimOptions } from "../../driver/driver.js";

/** A parameter pg reads only when it binds the statement. */
export interface LateParameter {
  toPostgres(): string;
}

/** A number parameter computed by `read` when the statement is bound. */
export function late(read: () => number): LateParameter {
  return { toPostgres: () => String(read()) };
}

/** The time of one claim statement, read once when it is bound, then fixed. */
export class SendTime {
  private at: ClaimAt | null = null;
  /** The claim time as a statement parameter. */
  readonly now = late(() => this.read().now);
  /** The lease end as a statement parameter. */
  readonly leaseUntil = late(() => this.read().leaseUntil);

  constructor(private readonly opts: ClaimOptions) {}

  /** The claim with its time: read at bind, or now if the statement was never bound. */
  read(): ClaimAt {
    return (this.at ??= claimAt(this.opts));
  }
}
