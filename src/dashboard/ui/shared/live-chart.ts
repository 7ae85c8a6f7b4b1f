/** The live chart: starts and finishes per second, and the waits to start, with uPlot. */
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Series } from "../api.js";

function options(title: string, width: number, series: uPlot.Series[]): uPlot.Options {
  return { title, width, height: 180, series: [{}, ...series], axes: [{}, { size: 50 }], legend: { live: false } };
}

/** Two uPlot charts (rates, wait) over the last 15 minutes, fed `series` on every poll. */
export function LiveChart({ series }: { series: Series | null }) {
  const rates = useRef<HTMLDivElement>(null);
  const wait = useRef<HTMLDivElement>(null);
  const plots = useRef<[uPlot, uPlot] | null>(null);

  useEffect(() => {
    const width = Math.max(300, Math.min(560, (rates.current?.parentElement?.clientWidth ?? 1120) / 2 - 16));
    plots.current = [
      new uPlot(
        options("Per second (last 15 min)", width, [
          { label: "started", stroke: "#2563eb", width: 2 },
          { label: "finished", stroke: "#16a34a", width: 2 },
        ]),
        [[], [], []],
        rates.current!,
      ),
      new uPlot(
        options("Wait to start, s", width, [
          { label: "mean of work started", stroke: "#7c3aed", width: 2 },
          { label: "oldest due work", stroke: "#d97706", width: 2 },
        ]),
        [[], [], []],
        wait.current!,
      ),
    ];
    return () => plots.current?.forEach((p) => p.destroy());
  }, []);

  useEffect(() => {
    if (!series || !plots.current) return;
    const t = series.t.map((x) => x / 1000);
    plots.current[0].setData([t, series.started, series.finished]);
    plots.current[1].setData([
      t,
      series.startWaitMs.map((x) => (x === null ? null : x / 1000)),
      series.waitMs.map((x) => (x === null ? null : x / 1000)),
    ]);
  }, [series]);

  return html`<div class="charts" data-points=${series?.t.length ?? 0}>
    <div ref=${rates}></div>
    <div ref=${wait}></div>
  </div>`;
}
