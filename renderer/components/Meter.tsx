// A horizontal bar: how much of a limit is used (amber near it, red at it). React sets `style` through
// the CSSOM, which the CSP's style-src allows (it forbids only style attributes in markup).
export function Meter({ value, max, label }: { value: number; max: number; label: string }) {
  const ratio = max > 0 ? Math.min(value / max, 1) : value > 0 ? 1 : 0;
  const tone = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'good';
  return (
    <div className="meter" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={value}>
      <div className={`meter-fill meter-${tone}`} style={{ width: `${ratio * 100}%` }} />
    </div>
  );
}
