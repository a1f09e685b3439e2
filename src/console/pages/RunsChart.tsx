import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import type { HourOfRuns } from "../api/awaken.js";
import { CHARTED_OUTCOMES, runTotals, stackedRunSeries } from "../projection/overview.js";

const HEIGHT = 220;
/** The page's own colours (CSS custom properties), so the chart follows light and dark. */
const COLOUR_VAR: Record<(typeof CHARTED_OUTCOMES)[number], string> = {
  completed: "--ok",
  failed: "--danger",
  interrupted: "--warn",
};

/**
 * Runs ended per hour by outcome as stacked bars, drawn by uPlot on a canvas sized to its container
 * (so it fits a phone's width). The legend is text below it with the totals, for screen readers too.
 */
export function RunsChart({ hours }: { hours: HourOfRuns[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const style = getComputedStyle(document.documentElement);
    const colour = (name: string) => style.getPropertyValue(name).trim() || "#888";
    const bars = uPlot.paths.bars?.({ size: [0.7, 40], align: 0 });
    const axis = { stroke: colour("--muted"), grid: { stroke: colour("--line"), width: 1 } };
    const chart = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: HEIGHT,
        legend: { show: false },
        series: [
          {},
          // Topmost stack first, as `stackedRunSeries` orders them.
          ...[...CHARTED_OUTCOMES].reverse().map((outcome) => ({
            label: outcome,
            fill: colour(COLOUR_VAR[outcome]),
            stroke: colour(COLOUR_VAR[outcome]),
            width: 0,
            paths: bars,
            points: { show: false },
          })),
        ],
        axes: [axis, { ...axis, size: 40 }],
        scales: {
          // Half an hour either side, so the first and last hours' bars are whole.
          x: { range: (_u, min, max) => [min - 1800, max + 1800] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        cursor: { drag: { x: false, y: false } },
      },
      stackedRunSeries(hours) as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [hours]);
  const totals = runTotals(hours);
  return (
    <figure className="chart">
      <div ref={box} data-testid="runs-chart" />
      <figcaption data-testid="runs-totals">
        {CHARTED_OUTCOMES.map((outcome) => (
          <span
            key={outcome}
            className={`total total-${outcome}`}
            data-outcome={outcome}
            data-count={totals[outcome]}
          >
            <span className="swatch" aria-hidden="true" />
            {totals[outcome]} {outcome}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
