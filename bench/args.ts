/**
 * Command-line options of the pure benchmarks (engine, decode): `--quick` picks the small
 * preset, `--json` asks for JSON output, and `--flag N` sets a numeric option.
 */
export function parseBenchArgs<T extends object>(
  argv: readonly string[],
  presets: { full: T; quick: T },
  numeric: Readonly<Record<string, keyof T>>,
  valid: (value: number) => boolean = Number.isFinite,
): { options: T; json: boolean } {
  const options: T = { ...(argv.includes('--quick') ? presets.quick : presets.full) };
  for (let i = 0; i < argv.length; i++) {
    const key = numeric[argv[i]!];
    if (key === undefined) {
      if (argv[i] !== '--quick' && argv[i] !== '--json') {
        throw new Error(`unknown argument ${argv[i]}`);
      }
      continue;
    }
    const value = Number(argv[++i]);
    if (!valid(value)) throw new Error(`${argv[i - 1]} needs a number, got ${argv[i]}`);
    (options as Record<keyof T, unknown>)[key] = value;
  }
  return { options, json: argv.includes('--json') };
}
