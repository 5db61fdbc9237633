// The counters as Workers Analytics Engine data points, when the relay has the METRICS binding: one
// point per counter per flush (index and blob1 the name, blob2 what counted it, double1 the count) and
// one per socket count written (index `sockets`; blob2 the object's kind, blob3 its id, double1 the
// count). Summing double1 × _sample_interval by blob1 gives the counters (docs/counters.md).
import type { FlushWrite } from '../db/metrics.ts';

/** `worker` for counts of a Worker isolate, else the kind of the Durable Object that counted. */
export type CountSource = 'worker' | 'host' | 'lobby' | 'chat';

export function writeDataPoints(dataset: AnalyticsEngineDataset, source: CountSource, write: FlushWrite): void {
  for (const [name, value] of write.counts ?? []) {
    dataset.writeDataPoint({ indexes: [name], blobs: [name, source], doubles: [value] });
  }
  const row = write.sockets;
  if (row) dataset.writeDataPoint({ indexes: ['sockets'], blobs: ['sockets', row.kind, row.objectId], doubles: [row.sockets] });
}
