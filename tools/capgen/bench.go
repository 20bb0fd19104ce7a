package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// benchConfig sizes the benchmark capture.
type benchConfig struct {
	bytes      byteSize // total value bytes produced
	valueSize  int
	producers  int
	consumers  int
	partitions int
	brokers    int
	codecs     string
	version    string // "newest" or "2.1"
	netns      bool
	file       string
	batchBytes int
	tls        bool // TLS 1.3 listeners; the key log beside the capture
	portBase   int  // the first broker's port
	fleet      fleetConfig
}

// byteSize is a flag value such as 300MB, 64KiB or 1000000.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	s = strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("bad size %q", s)
	}
	*b = byteSize(n * mult)
	return nil
}

func benchFlags(fs *flag.FlagSet) *benchConfig {
	c := &benchConfig{bytes: 10e6}
	fs.Var(&c.bytes, "bench-bytes", "bench: total record value bytes to produce (each crosses the wire twice; the capture is about 1.4x this with the default codecs)")
	fs.IntVar(&c.valueSize, "bench-value-size", 1000, "bench: bytes per record value")
	fs.IntVar(&c.producers, "bench-producers", 5, "bench: producer clients; codecs are assigned round robin")
	fs.IntVar(&c.consumers, "bench-consumers", 3, "bench: consumer group members")
	fs.IntVar(&c.partitions, "bench-partitions", 6, "bench: partitions of the benchmark topic")
	fs.IntVar(&c.brokers, "bench-brokers", 3, "bench: brokers in the fake cluster (ports 19200 upwards)")
	fs.StringVar(&c.codecs, "bench-codecs", strings.Join(codecs, ","), "bench: codecs, one per producer in turn")
	fs.StringVar(&c.version, "bench-version", "newest", `bench: client and broker protocol versions, "newest" or "2.1" (Kafka 2.1)`)
	fs.BoolVar(&c.netns, "bench-netns", false, "bench: run inside a new network namespace whose loopback has MTU 1500 and no segmentation offload (needs root, unshare, ip, ethtool)")
	fs.IntVar(&c.batchBytes, "bench-batch-bytes", 0, "bench: producer batch size limit in bytes (0: kgo's default, 1 MB); smaller means more requests")
	fs.StringVar(&c.file, "bench-file", "", "bench: capture file name (default bench-<version>.pcap)")
	fs.IntVar(&c.portBase, "bench-port", 19200, "bench: the first broker's port (the others follow)")
	fleetFlags(c, fs)
	fs.BoolVar(&c.tls, "bench-tls", false, "bench: brokers listen with TLS 1.3 (AES-128-GCM); the clients' key log is written beside the capture (<file>.keylog)")
	return c
}

const benchEnvInNetns = "CAPGEN_IN_NETNS"

// runBench records many producers and a consumer group moving bytes of
// values through a multi-broker kfake cluster.
func runBench(cfg benchConfig, out, tcpdump string) error {
	if cfg.netns && os.Getenv(benchEnvInNetns) == "" {
		// Install before entering the namespace: it has no route out.
		if _, err := ensureTool("ethtool", "ethtool"); err != nil {
			return err
		}
		return reexecInNetns()
	}
	if cfg.netns {
		if err := setupNetnsLoopback(); err != nil {
			return err
		}
	}
	if cfg.producers < 1 || cfg.consumers < 1 || cfg.partitions < 1 || cfg.brokers < 1 || cfg.valueSize < 1 {
		return errors.New("producers, consumers, partitions, brokers and value size must be positive")
	}
	var maxv *kversion.Versions
	switch cfg.version {
	case "newest":
	case "2.1":
		maxv = kversion.V2_1_0()
		// kfake serves OffsetForLeaderEpoch from v3, Kafka 2.1 has up
		// to v2: leave the key out so clients skip epoch validation
		// instead of failing fetches after a rebalance.
		maxv.SetMaxKeyVersion(int16(kmsg.OffsetForLeaderEpoch), -1)
	default:
		return fmt.Errorf("unknown -bench-version %q", cfg.version)
	}
	names := strings.Split(cfg.codecs, ",")
	if cfg.file == "" {
		cfg.file = "bench-" + cfg.version + ".pcap"
	}

	ports := make([]int, cfg.brokers)
	for i := range ports {
		ports[i] = cfg.portBase + i
	}
	opts := []kfake.Opt{kfake.NumBrokers(cfg.brokers), kfake.Ports(ports...), kfake.ClusterID("capgen-bench"),
		kfake.SeedTopics(int32(cfg.partitions), "capgen-bench"), kfake.GroupMinSessionTimeout(time.Second)}
	if maxv != nil {
		opts = append(opts, kfake.MaxVersions(maxv))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	file := filepath.Join(out, cfg.file)
	var tlsOpt kgo.Opt
	if cfg.tls {
		cert, err := selfSigned()
		if err != nil {
			return err
		}
		opts = append(opts, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}))
		// The key log sits beside the capture (the .tmp in a name made
		// by mk/bench.mk is dropped: the capture is renamed after).
		kl, err := os.Create(strings.TrimSuffix(strings.TrimSuffix(file, filepath.Ext(file)), ".tmp") + ".keylog")
		if err != nil {
			return err
		}
		defer kl.Close()
		tlsOpt = kgo.DialTLSConfig(clientTLS(kl, tls.VersionTLS13, tls.VersionTLS13))
	}
	c, err := startCaptureBuffer(tcpdump, "lo", file, ports, 1<<20) // 1 GiB: bursts outrun tcpdump on 2 cores
	if err != nil {
		return err
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		c.stop()
		return err
	}
	var runErr error
	if cfg.fleet.on {
		runErr = fleetTraffic(cfg, ports, maxv, tlsOpt)
	} else {
		runErr = benchTraffic(cfg, names, ports, maxv, tlsOpt)
	}
	cluster.Close()
	if err := c.stop(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	log.Printf("bench: wrote %s (%d bytes)", file, st.Size())
	return nil
}

// benchClientOpts are the options every bench client shares: the
// cluster's brokers as seeds, TLS when the brokers listen with it, and
// the version ceiling of -bench-version.
func benchClientOpts(ports []int, maxv *kversion.Versions, tlsOpt kgo.Opt) []kgo.Opt {
	seeds := make([]string, len(ports))
	for i, p := range ports {
		seeds[i] = addr(p)
	}
	common := []kgo.Opt{kgo.SeedBrokers(seeds...)}
	if tlsOpt != nil {
		common = append(common, tlsOpt)
	}
	if maxv != nil {
		common = append(common, kgo.MaxVersions(maxv))
	}
	return slices.Clip(common)
}

func benchTraffic(cfg benchConfig, names []string, ports []int, maxv *kversion.Versions, tlsOpt kgo.Opt) error {
	common := benchClientOpts(ports, maxv, tlsOpt)
	records := int64(cfg.bytes) / int64(cfg.valueSize)
	if records < 1 {
		records = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	var consumed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.producers+cfg.consumers)
	consCtx, stopConsumers := context.WithCancel(ctx)
	defer stopConsumers()
	for i := 0; i < cfg.consumers; i++ {
		cl, err := kgo.NewClient(append(slices.Clip(common), kgo.ClientID(fmt.Sprintf("capgen-bench-consumer-%d", i)),
			kgo.ConsumerGroup("capgen-bench"), kgo.ConsumeTopics("capgen-bench"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for consCtx.Err() == nil {
				fs := cl.PollFetches(consCtx)
				fs.EachError(func(t string, p int32, err error) {
					if !errors.Is(err, context.Canceled) {
						log.Printf("bench: fetch %s/%d: %v", t, p, err)
					}
				})
				if consumed.Add(int64(fs.NumRecords())) >= records {
					stopConsumers()
				}
			}
		}()
	}

	var pw sync.WaitGroup
	per := records / int64(cfg.producers)
	for i := 0; i < cfg.producers; i++ {
		n := per
		if i == cfg.producers-1 {
			n = records - per*int64(cfg.producers-1)
		}
		codec := strings.TrimSpace(names[i%len(names)])
		popts := append(slices.Clip(common), kgo.ClientID(fmt.Sprintf("capgen-bench-producer-%d-%s", i, codec)),
			kgo.DefaultProduceTopic("capgen-bench"), kgo.ProducerBatchCompression(kgoCodec(codec)),
			kgo.ProducerLinger(5*time.Millisecond))
		if cfg.batchBytes > 0 {
			popts = append(popts, kgo.ProducerBatchMaxBytes(int32(cfg.batchBytes)))
		}
		cl, err := kgo.NewClient(popts...)
		if err != nil {
			return err
		}
		pw.Add(1)
		go func(i int) {
			defer pw.Done()
			defer cl.Close()
			var failed atomic.Bool
			for j := int64(0); j < n; j++ {
				v := benchValue(i, j, cfg.valueSize)
				cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("p%d-%d", i, j)), Value: v},
					func(_ *kgo.Record, err error) {
						if err != nil && failed.CompareAndSwap(false, true) {
							errs <- fmt.Errorf("producer %d: %w", i, err)
						}
					})
			}
			if err := cl.Flush(ctx); err != nil {
				errs <- err
			}
		}(i)
	}
	pw.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	if got := consumed.Load(); got < records {
		return fmt.Errorf("consumed %d of %d records", got, records)
	}
	log.Printf("bench: %d records of %d bytes through %d producers and %d consumers", records, cfg.valueSize, cfg.producers, cfg.consumers)
	return nil
}

// benchValue is a half compressible value: text with a record-specific
// pseudo-random tail.
func benchValue(p int, j int64, size int) []byte {
	b := make([]byte, size)
	x := uint64(p+1)*0x9E3779B97F4A7C15 ^ uint64(j+1)*0xBF58476D1CE4E5B9
	for i := range b {
		if i < size/2 {
			b[i] = "capgen benchmark value "[i%23]
			continue
		}
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// reexecInNetns runs this same command again in a new network namespace.
func reexecInNetns() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), benchEnvInNetns+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// setupNetnsLoopback brings the namespace's loopback up with an Ethernet
// MTU and segmentation offloads off, so captured segments are at most 1500
// bytes as on a real network.
func setupNetnsLoopback() error {
	for _, args := range [][]string{
		{"ip", "link", "set", "lo", "mtu", "1500", "up"},
		{"ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
