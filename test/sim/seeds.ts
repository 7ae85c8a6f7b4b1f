/**
 * The seeds of the short form: a fresh first seed each run (printed), or the one given
 * in SIM_SEED; the count from SIM_<STORE>_SEEDS.
 */

/** The first seed and the number of seeds of a short-form batch. */
export function seedsFromEnv(store: string, defaultCount: number): { first: number; count: number } {
  const given = process.env.SIM_SEED;
  const first = given !== undefined ? Number(given) : Math.floor(Math.random() * 1_000_000_000);
  const count = Number(process.env[`SIM_${store}_SEEDS`] ?? defaultCount);
  return { first, count };
}
