// Prints HW and LSO of a topic: node lso.mjs <topic> <partitions>
import { offsets, fmt } from './common.mjs';
console.log(
  new Date().toISOString(),
  process.argv[2],
  fmt(await offsets(process.argv[2], Number(process.argv[3] ?? 1))),
);
