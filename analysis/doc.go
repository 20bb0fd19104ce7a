// Package analysis answers the questions operators bring to a capture,
// from the facts of its exchanges (package facts) and the TCP timing of
// their frames (dissect.Frame.TCP):
//
//   - groups (GroupsReport, `kwire groups`): per consumer group — classic
//     JoinGroup/SyncGroup groups, KIP-848 consumer groups, share and
//     streams groups as far as their heartbeats show — its members, each
//     generation (or member epoch) with its leader, protocol, every
//     member's assignment, what moved, how long the rebalance took and
//     what started it; errors with their meaning, heartbeats late or
//     missed against the session timeout, commits per partition and lag;
//     a timeline of events;
//   - transactions (TxnsReport, `kwire txns`): per transactional ID and
//     idempotent producer, InitProducerId results and epoch bumps
//     (KIP-890), transactions with their partitions, groups, batches and
//     sequences, EndTxn outcomes and durations, fencing (who fenced whom),
//     and what read_committed consumers were told (aborted transactions,
//     control markers);
//   - findings (FindingsReport, `kwire stats` and `kwire read
//     --findings`): the rules of findings.go (Rules lists them, each with
//     an ID, severity, one-line summary and the evidence it rests on),
//     each finding with the packets it rests on.
//
// An Analyzer is a dissect.Sink: it is fed exchanges and events in emit
// order (the order the Dissector completes them), on one goroutine. It
// reads facts only — never a tree, never a field name — and resolves
// topic IDs with the run's facts.Names in that order. It keeps no
// exchange, frame or tree.
//
// Memory is bounded by Options.MaxMemory, in bytes, over everything the
// reports keep per group, member, generation, producer, transaction and
// finding: past it the oldest timeline events go first, then the oldest
// generations and transactions, then members and producers that are
// gone; what was dropped is counted in the reports (Dropped). Aggregate
// counts (generations, rebalances, heartbeats, commits) keep counting.
//
// Reports are deterministic: lists are sorted, times come from the
// capture. Their JSON follows kwire's vocabulary (docs/json.md): keys in
// lowerCamelCase, durations in milliseconds with keys ending in Ms,
// times RFC 3339 in UTC, absent values null, Kafka's names for enums and
// errors.
package analysis
