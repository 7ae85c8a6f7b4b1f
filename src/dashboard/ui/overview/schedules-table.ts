/** The schedules table of the overview: each cron schedule, its next run and its last work. */
import { html } from "htm/preact";
import { api } from "../api.js";
import { when } from "../shared/format.js";
import { usePoll } from "../shared/hooks.js";
import { href } from "../shared/route.js";

/** Every schedule of the store, by pool and id; nothing when there is none. */
export function Schedules() {
  const schedules = usePoll(api.schedules, []);
  if (schedules.error) return html`<p class="error">${schedules.error}</p>`;
  const rows = schedules.data ?? [];
  if (!rows.length) return null;
  return html`
    <h2>Schedules</h2>
    <table class="schedules">
      <thead>
        <tr>
          <th>Pool</th>
          <th>Schedule</th>
          <th>Cron</th>
          <th>Time zone</th>
          <th>Handler</th>
          <th>Next run</th>
          <th>Last tick</th>
          <th>Last work</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (s) =>
            html`<tr data-schedule=${s.id}>
              <td><a href=${href.pool(s.pool)}>${s.pool}</a></td>
              <td>${s.id}</td>
              <td><code>${s.spec.cron}</code></td>
              <td>${s.spec.timezone}</td>
              <td>${s.handler}</td>
              <td>${when(s.nextRunAt)}</td>
              <td>${when(s.lastTick)}</td>
              <td>${s.lastWorkId ? html`<a href=${href.work(s.lastWorkId)}>${s.lastWorkId}</a>` : "–"}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  `;
}
