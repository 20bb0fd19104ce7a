// Command capgen generates kwire's golden packet captures.
//
// It starts fake Kafka brokers in-process on loopback (franz-go's kfake, and
// a small pre-0.11 broker of its own for magic 0/1 message sets), drives real
// client libraries against them (franz-go kgo, IBM sarama, segmentio
// kafka-go, librdkafka via kcat, and small raw clients written here), and
// records each scenario with tcpdump into its own pcap file. Every scenario
// uses its own ports so captures never mix. pcaps/README.md describes each
// capture. The captures of operators' situations (situations.go: groups
// that rebalance, transactions fenced and aborted, throttling, leader
// moves, a slow broker and a lossy network, misbehaving clients) also get
// an expectation file (expect.go) of what their clients reported, which
// TestExpectations checks against the capture.
//
// Usage (from tools/capgen):
//
//	go run . -out ../../pcaps                 # all golden captures
//	go run . -out ../../pcaps -only kgo,kcat  # some of them
//	go run . -list                            # list scenarios
//	go run . -summarize ../../pcaps/*.pcap    # check what captures hold
//	go run . -bench -bench-bytes 210MB -out /tmp/bench   # ~300 MB benchmark capture
//	CAPGEN_PCAPS_DIR=/tmp/x go test .         # check a fresh run (go run . -out /tmp/x)
//
// Capturing on loopback needs root or CAP_NET_RAW; run as root, capgen
// installs a missing tcpdump, kcat or ethtool with apt-get.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// verbose makes capgen log tcpdump's packet counts.
var verbose bool

// scenario is one capture: the ports it uses and the traffic it drives.
type scenario struct {
	name  string
	file  string
	ports []int
	run   func(ports []int) error
	// runX, when set instead of run, also fills the capture's
	// expectation file (expect.go), written beside it.
	runX func(ports []int, x *expectation) error
	// netns scenarios run in a network namespace of their own (capgen
	// re-executes itself under unshare --net); setup builds the network
	// there before the capture starts and returns the interface to
	// capture on and a cleanup.
	netns bool
	setup func(x *expectation) (iface string, cleanup func(), err error)
	// keylog: the scenario writes a TLS key log beside its capture
	// (<capture without extension>.keylog, keylogFile while it runs).
	keylog bool
	// post, when not nil, rewrites the finished capture file.
	post func(file string) error
	// capture, when set, are the ports captured (default ports).
	capture []int
}

// expectFile is the expectation file beside a capture.
func expectFile(pcap string) string { return strings.TrimSuffix(pcap, ".pcap") + ".expect.json" }

func scenarios() []scenario {
	return append(append([]scenario{
		{name: "kgo", file: "kgo-produce-consume.pcap", ports: []int{19092}, run: runKgo},
		{name: "sarama", file: "sarama-produce-consume.pcap", ports: []int{19093}, run: runSarama},
		{name: "kafkago", file: "kafkago-produce-consume.pcap", ports: []int{19094}, run: runKafkaGo},
		{name: "kcat", file: "kcat-produce-consume.pcap", ports: []int{19095}, run: runKcat},
		{name: "large", file: "kgo-large-value.pcap", ports: []int{19096}, run: runLargeValue},
		{name: "mixed", file: "mixed-versions.pcap", ports: []int{19097, 19098}, run: runMixedVersions},
		{name: "unsupported", file: "unsupported-versions.pcap", ports: []int{19099}, run: runUnsupportedVersions},
		{name: "sasl-plain", file: "sasl-plain.pcap", ports: []int{19100}, run: runSaslPlain},
		{name: "sasl-scram", file: "sasl-scram.pcap", ports: []int{19101}, run: runSaslScram},
		{name: "sasl-v0", file: "sasl-v0-raw.pcap", ports: []int{19102}, run: runSaslV0},
		{name: "tls", file: "kgo-tls.pcap", ports: []int{19103}, run: runTLS},
		{name: "legacy", file: "sarama-legacy-message-sets.pcap", ports: []int{19104}, run: runLegacy},
		{name: "kafkapython", file: "kafkapython-produce-consume.pcap", ports: []int{19105}, run: runKafkaPython},
		{name: "kafkajs", file: "kafkajs-produce-consume.pcap", ports: []int{19106}, run: runKafkaJS},
	}, tlsScenarios()...), append(situationScenarios(), diffScenarios()...)...)
}

// tlsScenarios are the TLS captures with key logs (tlskeys.go), on ports
// 19310-19329.
func tlsScenarios() []scenario {
	return []scenario{
		{name: "tls13", file: "kgo-tls13.pcap", ports: []int{19310}, run: runTLS13, keylog: true},
		{name: "tls12", file: "kgo-tls12.pcap", ports: []int{19311}, run: runTLS12, keylog: true},
		{name: "tls-sasl", file: "kgo-tls-sasl-scram.pcap", ports: []int{19312}, run: runSASLSSL, keylog: true},
		// The proxy listens on 19314; the proxy-to-broker leg only is captured.
		{name: "tls-keyupdate", file: "kgo-tls-keyupdate.pcap", ports: []int{19313, 19314}, run: runTLSKeyUpdate, keylog: true,
			capture: []int{19313}},
		{name: "tls-cbc", file: "kgo-tls-cbc-openssl.pcap", ports: []int{19315}, run: runTLSCBC, keylog: true},
		{name: "tls-kafkapython", file: "kafkapython-tls.pcap", ports: []int{19316}, run: runKafkaPythonTLS, keylog: true},
		{name: "tls-kafkajs", file: "kafkajs-tls.pcap", ports: []int{19317}, run: runKafkaJSTLS, keylog: true},
		{name: "tls-dsb", file: "kgo-tls-dsb.pcapng", ports: []int{19318}, run: runTLSDSB, keylog: true, post: injectSecrets},
	}
}

func main() {
	// -traffic is a separate mode with flags of its own (traffic.go): live
	// traffic on loopback for kwire live's tests, without tcpdump.
	if len(os.Args) > 1 && (os.Args[1] == "-traffic" || os.Args[1] == "--traffic") {
		os.Exit(trafficMain(os.Args[2:]))
	}
	var (
		out     = flag.String("out", "../../pcaps", "directory for the capture files")
		only    = flag.String("only", "", "comma-separated scenario names to run (default all)")
		list    = flag.Bool("list", false, "list scenarios and exit")
		tcpdump = flag.String("tcpdump", "tcpdump", "tcpdump binary")
		iface   = flag.String("i", "lo", "interface to capture on")
		bench   = flag.Bool("bench", false, "run the benchmark capture instead of the golden scenarios")
	)
	flag.BoolVar(&verbose, "v", false, "log tcpdump's summary of each capture")
	summarizeFlag := flag.Bool("summarize", false, "print the Kafka exchanges of the capture files given as arguments and exit")
	trafficOnly := flag.String("traffic-only", "", "run the traffic of this `SCENARIO` (its broker and clients) without capturing it, on -port if given, and exit: the client under test of an outside capture (scripts/kafka-ci-check.sh)")
	trafficPort := flag.Int("port", 0, "with -traffic-only, the broker port (a scenario with one port)")
	bf := benchFlags(flag.CommandLine)
	flag.Parse()
	log.SetFlags(log.Ltime)

	if *trafficOnly != "" {
		if err := runTrafficOnly(*trafficOnly, *trafficPort); err != nil {
			log.Fatalf("%s: %v", *trafficOnly, err)
		}
		return
	}
	if *summarizeFlag {
		for _, f := range flag.Args() {
			s, err := summarize(f)
			if err != nil {
				log.Fatalf("%s: %v", f, err)
			}
			s.print(os.Stdout, f)
		}
		return
	}

	tp, err := ensureTool(*tcpdump, "tcpdump")
	if err != nil {
		log.Fatal(err)
	}
	*tcpdump = tp
	if *bench {
		if err := runBench(*bf, *out, *tcpdump); err != nil {
			log.Fatalf("bench: %v", err)
		}
		return
	}

	all := scenarios()
	if *list {
		for _, s := range all {
			fmt.Printf("%-12s %-30s ports %v\n", s.name, s.file, s.ports)
		}
		return
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	filter := len(want) > 0
	failed := 0
	for _, s := range all {
		if filter && !want[s.name] {
			continue
		}
		delete(want, s.name)
		start := time.Now()
		err := runScenario(s, *out, *tcpdump, *iface)
		// A situation scenario waits on timing (rebalances, session
		// timeouts) and checks what its clients reported against the
		// broker: run it again once when that went wrong.
		runsHere := !s.netns || os.Getenv(envInNetns) != ""
		for try := 1; try < 3 && (errors.Is(err, errDropped) || (try == 1 && err != nil && s.runX != nil && runsHere)); try++ {
			log.Printf("%s: %v; running it again", s.name, err)
			err = runScenario(s, *out, *tcpdump, *iface)
		}
		if err != nil {
			log.Printf("%s: FAILED: %v", s.name, err)
			failed++
			continue
		}
		if !runsHere {
			continue // the capgen in the namespace said what it wrote
		}
		st, _ := os.Stat(filepath.Join(*out, s.file))
		log.Printf("%s: wrote %s (%d bytes) in %v", s.name, s.file, st.Size(), time.Since(start).Round(time.Millisecond))
	}
	for n := range want {
		log.Printf("unknown scenario %q", n)
		failed++
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// runScenario records one scenario into out/s.file (and its expectation
// file, for scenarios that have one).
func runScenario(s scenario, out, tcpdump, iface string) error {
	if s.netns && os.Getenv(envInNetns) == "" {
		return runInNetns(s, out)
	}
	file := filepath.Join(out, s.file)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	var x *expectation
	if s.runX != nil {
		x = newExpectation(s)
	}
	keylogFile = ""
	if s.keylog {
		keylogFile = strings.TrimSuffix(file, filepath.Ext(file)) + ".keylog"
		if err := os.Remove(keylogFile); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	cleanup := func() {}
	if s.setup != nil {
		var err error
		iface, cleanup, err = s.setup(x)
		if err != nil {
			return err
		}
	}
	capPorts := s.ports
	if s.capture != nil {
		capPorts = s.capture
	}
	c, err := startCapture(tcpdump, iface, tmp, capPorts)
	if err != nil {
		cleanup()
		return err
	}
	var runErr error
	if s.runX != nil {
		runErr = s.runX(s.ports, x)
	} else {
		runErr = s.run(s.ports)
	}
	stopErr := c.stop()
	cleanup()
	if runErr != nil {
		os.Remove(tmp)
		return runErr
	}
	if stopErr != nil {
		os.Remove(tmp)
		return stopErr
	}
	// Copy rather than rename: tcpdump may have dropped privileges and own
	// tmp, and the committed file should belong to whoever runs capgen.
	b, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	os.Remove(tmp)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return err
	}
	if x != nil {
		if err := x.write(expectFile(file)); err != nil {
			return err
		}
	}
	if s.post != nil {
		return s.post(file)
	}
	return nil
}

// runTrafficOnly runs one scenario's traffic with no capture.
func runTrafficOnly(name string, port int) error {
	for _, s := range scenarios() {
		if s.name != name {
			continue
		}
		if s.run == nil || s.netns {
			return errors.New("only scenarios without a network namespace or expectation file run alone")
		}
		ports := s.ports
		if port != 0 {
			if len(ports) != 1 {
				return fmt.Errorf("-port: the scenario uses %d ports", len(ports))
			}
			ports = []int{port}
		}
		return s.run(ports)
	}
	return fmt.Errorf("no scenario %q (see -list)", name)
}
