package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// slow-broker.pcap and lossy-network.pcap: the same client workload on
// the same two-namespace network (netns.go), once with a broker that
// answers every Produce late (a kfake control hook sleeps before kfake
// handles it) and once with a network that delays every frame and drops
// some segments (the userspace wire), so that a "network or broker"
// finding can tell them apart: in the first the time goes between the
// request's last byte and the response's first, with no retransmission;
// in the second it goes into round trips and retransmissions.

const (
	netTopic        = "capgen-net"
	netRecords      = 20
	netValueSize    = 2000 // two segments per Produce request at MTU 1500
	slowBrokerDelay = 250 * time.Millisecond
	lossyDelay      = 20 * time.Millisecond
)

// netScenario builds one of the two.
func netScenario(name string, port int, cfg wireConfig, brokerDelay time.Duration) scenario {
	var topo *netTopology
	return scenario{name: name, file: name + ".pcap", ports: []int{port}, netns: true,
		setup: func(x *expectation) (string, func(), error) {
			var err error
			topo, err = setupNetTopology(x, cfg)
			if err != nil {
				return "", nil, err
			}
			return tapClient, topo.close, nil
		},
		runX: func(ports []int, x *expectation) error {
			return runNetWorkload(ports[0], topo, x, brokerDelay)
		}}
}

// e2eHook logs kgo's own account of each Produce and Fetch round trip.
type e2eHook struct {
	x        *expectation
	clientID string
}

func (h e2eHook) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != int16(kmsg.Produce) {
		return
	}
	h.x.logf(h.clientID, "kgo e2e %s: wrote %d bytes in %v, waited %v for the response, read %d bytes in %v (err %v)",
		kmsg.NameForKey(key), e.BytesWritten, e.TimeToWrite.Round(time.Microsecond), e.ReadWait.Round(time.Microsecond),
		e.BytesRead, e.TimeToRead.Round(time.Microsecond), e.Err())
}

func runNetWorkload(port int, topo *netTopology, x *expectation, brokerDelay time.Duration) error {
	c, err := newCluster(port, kfake.SeedTopics(1, netTopic), kfake.ListenFn(topo.b.listen))
	if err != nil {
		return err
	}
	defer c.Close()
	broker := netnsBroker + fmt.Sprintf(":%d", port)
	x.Brokers = []expectBroker{{0, broker}}
	x.Varies = []string{"timestamps and TCP ports", "TCP sequence numbers",
		"the number of Fetch requests", "which segments the wire drops (it counts segments, and timing changes how many there are)"}
	if brokerDelay > 0 {
		x.About = fmt.Sprintf("The broker answers every Produce %v late (a kfake control hook sleeps before kfake handles the request); "+
			"the network is clean (no delay, no loss). Workload: capgen-kgo-net-producer sends %d Produce requests of one %d-byte record each, "+
			"one at a time, then capgen-kgo-net-consumer reads them back. Captured on the client's side of a two-namespace network (MTU 1500).",
			brokerDelay, netRecords, netValueSize)
		in := x.inject(&expectInjection{Kind: "delay", API: "Produce", DelayMs: int32(brokerDelay.Milliseconds()),
			Note: "kfake control hook: SleepControl before kfake handles each Produce request"})
		c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			x.count(in)
			x.logf("capgen-broker", "delaying a Produce request by %v", brokerDelay)
			c.SleepControl(func() { time.Sleep(brokerDelay) })
			return nil, nil, false
		})
	} else {
		x.About = fmt.Sprintf("The network delays every frame by %v each way and drops some TCP segments (a userspace wire between two "+
			"network namespaces); the broker answers at once. Workload: capgen-kgo-net-producer sends %d Produce requests of one %d-byte record each, "+
			"one at a time, then capgen-kgo-net-consumer reads them back. Captured on the client's side (MTU 1500): segments the clients sent "+
			"appear twice (the lost copy and the retransmission), segments the broker sent that were lost appear once, late.",
			lossyDelay, netRecords, netValueSize)
	}
	seed := kgo.SeedBrokers(broker)
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	x.client("capgen-kgo-net-producer", "franz-go kgo v1.22.3", fmt.Sprintf("produces %d records, one Produce request each, acks=all", netRecords))
	pcl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-net-producer"), kgo.DefaultProduceTopic(netTopic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1),
		kgo.WithHooks(e2eHook{x, "capgen-kgo-net-producer"}))
	if err != nil {
		return err
	}
	defer pcl.Close()
	for i := 0; i < netRecords; i++ {
		v := []byte(strings.Repeat(fmt.Sprintf("net record %02d ", i), netValueSize/14+1)[:netValueSize])
		t := time.Now()
		if err := pcl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("net-%02d", i)), Value: v}).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
		x.logf("capgen-kgo-net-producer", "record net-%02d acknowledged after %v", i, time.Since(t).Round(time.Millisecond))
	}
	pcl.Close()
	x.client("capgen-kgo-net-consumer", "franz-go kgo v1.22.3", "reads the records back (no group)")
	keys, err := consumeKeys(ctx, netRecords, seed, kgo.ClientID("capgen-kgo-net-consumer"), kgo.ConsumeTopics(netTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	x.logf("capgen-kgo-net-consumer", "read %d records", len(keys))
	x.Consumers = append(x.Consumers, &expectConsumer{ClientID: "capgen-kgo-net-consumer", IsolationLevel: "read_uncommitted", Topic: netTopic, Keys: keys})
	x.requests("Produce v13", "Fetch v18", "Metadata v13")
	x.Wire.NoOtherErrors = true
	if brokerDelay > 0 {
		x.Wire.SlowResponses = map[string]int{"Produce": netRecords}
		x.Wire.SlowMs = int(brokerDelay.Milliseconds()) - 10
		x.Wire.MaxRetransmissions = new(int)
	} else {
		x.Wire.MinRetransmissions = 1
	}
	return nil
}
