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
	out = append(out,
		scenario{name: "group-kip848", file: "group-kip848.pcap", ports: []int{19345}, runX: runKIP848},
		scenario{name: "txn-fenced", file: "txn-fenced.pcap", ports: []int{19346}, runX: runTxnFenced},
		scenario{name: "txn-read-committed", file: "txn-read-committed.pcap", ports: []int{19347}, runX: runTxnReadCommitted},
		scenario{name: "throttle", file: "throttle.pcap", ports: []int{19348}, runX: runThrottle},
		scenario{name: "leader-move", file: "leader-move.pcap", ports: []int{19349, 19350, 19351}, runX: runLeaderMove},
		scenario{name: "metadata-storm", file: "metadata-storm.pcap", ports: []int{19354}, runX: runMetadataStorm},
		scenario{name: "skipped-apiversions", file: "skipped-apiversions.pcap", ports: []int{19355}, runX: runSkippedApiVersions},
		netScenario("slow-broker", 19352, wireConfig{}, slowBrokerDelay),
		netScenario("lossy-network", 19353, wireConfig{delay: lossyDelay, dropEvery: 10, dropFirst: 5}, 0),
	)
	return out
}
