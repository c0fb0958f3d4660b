/**
 * The `OTEL_*` variables to hand to the OpenCode child, only when the user wants OpenCode's own
 * telemetry (OpenCode exports spans when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). The caller (the
 * CLI) passes its environment in; nothing here reads `process.env`.
 */
export function otelPassThrough(
  env: Readonly<Record<string, string | undefined>>,
  wanted: boolean,
): Record<string, string> {
  if (!wanted) return {}
  const passed: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("OTEL_") || value === undefined) continue
    passed[name] = value
  }
  return passed
}
