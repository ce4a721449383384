/**
 * The Grafana Foundation SDK declares its entry points only in package.json `exports`, which
 * this project's `moduleResolution: "node"` does not read (Node itself does, at run time). These
 * ambient modules point the type checker at the typings of the subpaths the generator uses.
 */
declare module '@grafana/grafana-foundation-sdk/cog' {
  export * from '@grafana/grafana-foundation-sdk/dist/cog';
}
declare module '@grafana/grafana-foundation-sdk/common' {
  export * from '@grafana/grafana-foundation-sdk/dist/common';
}
declare module '@grafana/grafana-foundation-sdk/dashboard' {
  export * from '@grafana/grafana-foundation-sdk/dist/dashboard';
}
declare module '@grafana/grafana-foundation-sdk/prometheus' {
  export * from '@grafana/grafana-foundation-sdk/dist/prometheus';
}
declare module '@grafana/grafana-foundation-sdk/stat' {
  export * from '@grafana/grafana-foundation-sdk/dist/stat';
}
declare module '@grafana/grafana-foundation-sdk/timeseries' {
  export * from '@grafana/grafana-foundation-sdk/dist/timeseries';
}
