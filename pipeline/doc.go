// Package pipeline passes a capture's exchanges from a dissect.Dissector
// to their consumers on every core, in emit order, within bounds in
// bytes:
//
//   - Flight bounds what a pipeline holds at once: jobs, their frame
//     bytes, and the memory decoding and rendering them takes
//     (--max-decode-memory), with the oldest job always able to go on;
//   - Ordered decodes and renders exchanges on every core and writes
//     them in emit order, through a Consumer (kwire read's trees and JSON);
//   - DecodeAhead decodes exchanges on every core for consumers that
//     print nothing per exchange (kwire stats, groups, txns);
//   - Sorter reorders exchanges by their requests' packets (kwire read
//     --sort time) in a window bounded in capture time and bytes;
//   - Output holds what a worker rendered, in chunks of size classes from
//     free lists reserved from its job's memory, until it is written in
//     order (and GetLine/PutLine the buffers of JSON lines).
//
// Nothing here knows of flags or output: package main wires them.
package pipeline
