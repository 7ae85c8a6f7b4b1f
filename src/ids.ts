/**
 * Work ids: 26-character, time-sortable (48-bit ms timestamp + 80 random bits, Crockford
 * base32, like ULID). Sortable ids keep the primary-key index append-mostly, and the
 * embedded time lets `status` tell a deleted id from one that never existed.
 */
import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** A new work id for time `now` (epoch ms). */
export function newWorkId(now: number): string {
  let time = Math.max(0, Math.floor(now));
  let head = "";
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const bytes = randomBytes(16);
  let tail = "";
  for (let i = 0; i < 16; i++) tail += ALPHABET[bytes[i]! % 32];
  return head + tail;
}

/** True if `id` has the shape of a work id. */
export function isWorkId(id: unknown): id is string {
  return typeof id === "string" && ID_PATTERN.test(id);
}

/** The creation time (epoch ms) embedded in a well-formed id. */
export function workIdTime(id: string): number {
  let time = 0;
  for (let i = 0; i < 10; i++) time = time * 32 + ALPHABET.indexOf(id[i]!);
  return time;
}
