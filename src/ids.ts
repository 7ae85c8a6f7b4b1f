/**
 * Work ids: 26-character, time-sortable (48-bit ms timestamp + 80 random bits, Crockford
 * base32, like ULID). Sortable ids keep the primary-key index append-mostly, and the
 * embedded time lets `status` tell a deleted id from one that never existed. Within one
 * millisecond a process's ids increase (the previous id's random part plus one, as a
 * monotonic ULID does), so the claim's last tie-break, the id, is enqueue order.
 */
import { randomFillSync } from "node:crypto";
import { InvalidArgumentError } from "./errors.js";
import type { WorkId } from "./types.js";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The time and random digits (0..31) of the last id made, for the next one in the same millisecond. */
let lastTime = -1;
const lastTail = new Uint8Array(16);

/** A new work id for time `now` (epoch ms). */
export function newWorkId(now: number): string {
  const ms = Math.max(0, Math.floor(now));
  let time = ms;
  let head = "";
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  if (ms !== lastTime || !incrementTail()) {
    const bytes = randomChunk();
    for (let i = 0; i < 16; i++) lastTail[i] = bytes[i]! % 32;
    lastTime = ms;
  }
  let tail = "";
  for (let i = 0; i < 16; i++) tail += ALPHABET[lastTail[i]!];
  return head + tail;
}

/** Adds one to the last id's random digits; false when they were all 31 (then a fresh draw follows). */
function incrementTail(): boolean {
  for (let i = 15; i >= 0; i--) {
    if (lastTail[i]! < 31) {
      lastTail[i] = lastTail[i]! + 1;
      return true;
    }
    lastTail[i] = 0;
  }
  return false;
}

/** Random bytes are drawn 4 KiB at a time: one system call per 256 ids, not per id. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let offset = POOL_SIZE;

function randomChunk(): Buffer {
  if (offset + 16 > pool.length) {
    pool = Buffer.allocUnsafe(POOL_SIZE);
    randomFillSync(pool);
    offset = 0;
  }
  const chunk = pool.subarray(offset, offset + 16);
  offset += 16;
  return chunk;
}

/** True if `id` has the shape of a work id. */
export function isWorkId(id: unknown): id is WorkId {
  return typeof id === "string" && ID_PATTERN.test(id);
}

/** The creation time (epoch ms) embedded in a well-formed id. */
export function workIdTime(id: string): number {
  let time = 0;
  for (let i = 0; i < 10; i++) time = time * 32 + ALPHABET.indexOf(id[i]!);
  return time;
}

/**
 * Checks that `text` has the shape of a work id and returns it as a {@link WorkId}: for
 * ids read back from a database, a URL or a message. Throws InvalidArgumentError otherwise.
 */
export function toWorkId(text: string): WorkId {
  if (!isWorkId(text))
    throw new InvalidArgumentError("id", `must be a work id (26 characters of Crockford base32), got ${JSON.stringify(text)}`);
  return text as WorkId;
}
