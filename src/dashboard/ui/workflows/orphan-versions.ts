/**
 * The versions no live process defines: a workflow version with unfinished runs that no
 * running process has, so its pinned runs wait (and its unpinned ones run on other code).
 */
import { html } from "htm/preact";
import { api } from "../api.js";
import { usePoll } from "../shared/hooks.js";

/** The panel, when there is such a version; a click on one lists its unfinished runs through `onPick(name, version)`. */
export function OrphanVersions({ onPick }: { onPick: (name: string, version: string) => void }) {
  const versions = usePoll(api.workflowVersions, []);
  if (versions.error) return html`<p class="error">${versions.error}</p>`;
  const orphans = (versions.data ?? []).filter((v) => !v.live && v.unfinishedRuns > 0);
  if (orphans.length === 0) return null;
  return html`<section class="orphan-versions">
    <h2>Versions no live process defines</h2>
    <p>Their unfinished runs have no process with their code: start one with the version, or restart or cancel the runs.</p>
    <table>
      <thead>
        <tr>
          <th>Pool</th>
          <th>Workflow</th>
          <th>Version</th>
          <th>Pinned</th>
          <th class="num">Unfinished runs</th>
        </tr>
      </thead>
      <tbody>
        ${orphans.map(
          (v) =>
            html`<tr data-version=${v.version ?? ""} data-workflow=${v.name}>
              <td>${v.pool}</td>
              <td>${v.name}</td>
              <td>${v.version ?? "(none)"}</td>
              <td>${v.pinned ? "yes" : "no"}</td>
              <td class="num">
                <button class="link" onClick=${() => onPick(v.name, v.version ?? "")}>${v.unfinishedRuns}</button>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
