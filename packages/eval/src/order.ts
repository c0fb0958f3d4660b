/** Locale-independent string ordering (UTF-16 code units), so sorted output is the same on every machine. */
export function compareCodeUnits(a: string, b: string): number {
  if (a === b) return 0
  return a < b ? -1 : 1
}
