/**
 * A number with thousands separators, as `toLocaleString("en-US")` writes it ("24,990",
 * "1,234.568"), without it: the first locale call loads ICU's number data, about 20 ms of CPU in
 * every process that prints a count, which is every `bonsai` command.
 */
export function formatCount(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "∞" : "-∞";
  const sign = n < 0 || Object.is(n, -0) ? "-" : "";
  // integers exactly (scaling by 1000 to round would lose digits past 2^53 / 1000)
  const [whole, fraction] = Number.isInteger(n) ? [BigInt(Math.abs(n)).toString()] : String(Math.round(Math.abs(n) * 1000) / 1000).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${grouped}${fraction ? `.${fraction}` : ""}`;
}
