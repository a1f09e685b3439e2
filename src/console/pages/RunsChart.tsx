import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import type { HourOfRuns } from "../api/awaken.js";
import { CHARTED_OUTCOMES, runSeries, runTotals } from "../projection/overview.js";

const HEIGHT = 220;
/** The page's own colours (CSS custom properties), so the chart follows light and dark. */
const COLOUR_VAR: Record<(typeof CHARTED_OUTCOMES)[number], string> = {
  completed: "--ok",
  failed: "--danger",
  interrupted: "--warn",
};

/**
 * Runs ended per hour by outcome, drawn by uPlot on a canvas sized to its container (so it fits a
 * phone's width). The totals are text beside it, for screen readers and tests alike.
 */
export function RunsChart({ hours }: { hours: HourOfRuns[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const style = getComputedStyle(document.documentElement);
    const colour = (name: string) => style.getPropertyValue(name).trim() || "#888";
    const axis = { stroke: colour("--muted"), grid: { stroke: colour("--line"), width: 1 } };
    const chart = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: HEIGHT,
        series: [
          {},
          ...CHARTED_OUTCOMES.map((outcome) => ({
            label: outcome,
            stroke: colour(COLOUR_VAR[outcome]),
            width: 2,
            points: { show: true, size: 5 },
          })),
        ],
        axes: [axis, { ...axis, size: 40 }],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        cursor: { drag: { x: false, y: false } },
      },
      runSeries(hours) as uPlot.AlignedData,
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
            {totals[outcome]} {outcome}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
