// What the numbers were measured on: hardware, runtime, server versions and settings.
import os from "node:os";
import { withClient } from "./pg.mjs";
import { REDIS_URL } from "./env.mjs";

const PG_SETTINGS = [
  "server_version",
  "synchronous_commit",
  "fsync",
  "wal_sync_method",
  "full_page_writes",
  "shared_buffers",
  "max_connections",
  "commit_delay",
  "autovacuum",
];

export async function describeMachine({ needPostgres, needRedis }) {
  const cpus = os.cpus();
  const info = {
    cpu: cpus[0]?.model?.trim() ?? "unknown",
    cores: cpus.length,
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.arch()}`,
    node: process.version,
    loadAvgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(":memory:");
  info.sqlite = db.prepare("SELECT sqlite_version() AS v").get().v;
  db.close();
  if (needPostgres) {
    info.postgres = await withClient(async (c) => {
      const r = await c.query("SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)", [PG_SETTINGS]);
      return Object.fromEntries(r.rows.map((x) => [x.name, x.unit && x.unit !== "" ? `${x.setting} × ${x.unit}` : x.setting]));
    });
  }
  if (needRedis) {
    const { Redis } = await import("ioredis");
    const url = new URL(REDIS_URL);
    const r = new Redis({ host: url.hostname, port: Number(url.port || 6379) });
    try {
      const server = await r.info("server");
      const version = /redis_version:(\S+)/.exec(server)?.[1];
      const get = async (k) => (await r.config("GET", k))[1];
      info.redis = {
        version,
        appendonly: await get("appendonly"),
        appendfsync: await get("appendfsync"),
        save: (await get("save")) || '""',
        "maxmemory-policy": await get("maxmemory-policy"),
      };
    } finally {
      await r.quit();
    }
  }
  return info;
}
