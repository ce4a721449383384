// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient typings for the SDK subpaths (see the file)
/// <reference path="../../grafana/foundation-sdk.d.ts" />
/**
 * The Grafana Foundation SDK's dashboard types, as JSON: what a dashboard file may hold
 * according to the SDK. The SDK ships neither a JSON schema nor decoders (0.0.21: only builders
 * and TypeScript types), so test/unit/grafana-dashboard.test.ts validates the checked-in JSON by
 * type-checking it, as an object literal, against `DashboardJson` with the TypeScript compiler:
 * unknown keys (excess property checks), wrong value types and enum values outside the SDK's
 * enums are errors.
 */
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';

type Fn = (...args: never[]) => unknown;
type IsAny<T> = 0 extends 1 & T ? true : false;

/**
 * A TypeScript type as JSON: string enums become their values' string literals (JSON holds
 * "absolute", not `ThresholdsMode.Absolute`), methods (the SDK's variant markers) disappear.
 * Numeric enums stay: a number literal that is a member's value is assignable to them.
 */
export type Json<T> =
  IsAny<T> extends true
    ? unknown
    : T extends Fn
      ? never
      : T extends string
        ? `${T}`
        : T extends number | boolean | null | undefined
          ? T
          : T extends readonly (infer E)[]
            ? Json<E>[]
            : T extends object
              ? { [K in keyof T as T[K] extends Fn ? never : K]: Json<T[K]> }
              : T;

/** A panel of one plugin type with its options and custom field config typed by the SDK. */
type PanelJson<Type extends string, Options, Custom> = Omit<
  Json<dashboard.Panel>,
  'type' | 'targets' | 'options' | 'fieldConfig'
> & {
  type: Type;
  targets?: Json<prometheus.Dataquery>[];
  options?: Json<Options>;
  fieldConfig?: Omit<Json<dashboard.FieldConfigSource>, 'defaults'> & {
    defaults: Omit<Json<dashboard.FieldConfig>, 'custom'> & { custom?: Json<Custom> };
  };
};

export type TimeseriesPanelJson = PanelJson<
  'timeseries',
  timeseries.Options,
  timeseries.FieldConfig
>;
/** Stat panels have no custom field config. */
export type StatPanelJson = PanelJson<'stat', stat.Options, Record<string, never>>;
export type RowPanelJson = Omit<Json<dashboard.RowPanel>, 'panels'> & {
  panels: (TimeseriesPanelJson | StatPanelJson)[];
};

/** A dashboard JSON file of the panel types this project uses, with Prometheus queries. */
export type DashboardJson = Omit<Json<dashboard.Dashboard>, 'panels'> & {
  panels?: (TimeseriesPanelJson | StatPanelJson | RowPanelJson)[];
};
