/**
 * The header that carries an order's trace from its start into its workflow and activities:
 * @temporalio/interceptors-opentelemetry's TRACE_HEADER (test/tracing.unit.test.ts checks they
 * agree), named here so the workflow bundle and an untraced process need not load that package.
 */
export const TRACE_HEADER = '_tracer-data';
