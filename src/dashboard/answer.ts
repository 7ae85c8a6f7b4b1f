/** What a dashboard API endpoint answers. */

/** A status and a JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}
