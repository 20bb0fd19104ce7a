// Command kwire dissects the Kafka wire protocol: it decodes single frames,
// bodies and structs given as hex (kwire decode) and whole pcap/pcapng
// captures (kwire read), and lists the API keys it knows (kwire apis).
//
// Exit codes are the same for every command:
//
//	0  success
//	1  the input was read but something in it could not be decoded or
//	   dissected (the output still shows everything that was decoded): a
//	   malformed frame, a capture cut short, gaps, resyncs, truncated
//	   frames; unknown API keys and versions in captures are data
//	2  usage error, unreadable or unusable input (bad hex, not a capture)
//
// Everything below main returns errors; only main exits.
package main

import (
	"os"

	"github.com/kwire/kwire/internal/memtune"
)

func main() {
	memtune.Start()
	os.Exit(run(os.Args[1:], systemIO()))
}
