package main

// The captures of operators' situations (issue 16; pcaps/README.md from
// "group-rebalance-kgo.pcap" on): groups that rebalance, KIP-848 groups,
// fenced and aborted transactions, throttling, leader moves, a slow broker
// and a lossy network, metadata storms and clients that skip ApiVersions.
// Each writes an expectation file beside its capture (expect.go). Their
// brokers listen on 19340-19359.

func situationScenarios() []scenario {
	var out []scenario
	for i, lib := range rebalanceLibs() {
		out = append(out, scenario{name: "group-rebalance-" + lib.lib, file: "group-rebalance-" + lib.lib + ".pcap",
			ports: []int{19340 + i}, runX: runRebalance(lib)})
	}
	return out
}
