// Chart colours for light and dark schemes (SVG attributes cannot use Tailwind's dark: variant).
import { usePrefersDark } from '../data/use-color-scheme.ts';

export interface ChartPalette {
  p50: string;
  p99: string;
  grants: string;
  failover: string;
  grid: string;
  axis: string;
  tooltipBg: string;
  tooltipBorder: string;
  tooltipText: string;
}

const LIGHT: ChartPalette = {
  p50: '#0369a1',
  p99: '#c2410c',
  grants: '#047857',
  failover: '#b91c1c',
  grid: '#e2e8f0',
  axis: '#475569',
  tooltipBg: '#ffffff',
  tooltipBorder: '#cbd5e1',
  tooltipText: '#0f172a',
};

const DARK: ChartPalette = {
  p50: '#38bdf8',
  p99: '#fb923c',
  grants: '#34d399',
  failover: '#f87171',
  grid: '#334155',
  axis: '#94a3b8',
  tooltipBg: '#0f172a',
  tooltipBorder: '#475569',
  tooltipText: '#f1f5f9',
};

export function useChartPalette(): ChartPalette {
  return usePrefersDark() ? DARK : LIGHT;
}

export function tooltipStyle(p: ChartPalette) {
  return {
    contentStyle: { background: p.tooltipBg, border: `1px solid ${p.tooltipBorder}`, borderRadius: 6, color: p.tooltipText, fontSize: 12 },
    labelStyle: { color: p.tooltipText },
  };
}
