package main

// Traffic mode: a kfake broker and a kgo producer and consumer on loopback,
// without tcpdump, for capturing with `kwire live` (its tests run it as a
// subprocess so that kgo and kfake stay out of kwire's go.mod).
//
//	go run . -traffic -port 9092 -duration 10s     # from tools/capgen
//	go run . -traffic -port 0 -wait-stdin           # print the port, wait for a line
//
// Every round produces -records records in one Produce request (manual
// flushing: one batch) and fetches them back; rounds repeat every
// -interval until -duration has passed (at least one round). At the end
// one JSON line on stdout says what was done:
//
//	{"broker":"127.0.0.1:9092","topic":"kwire-live","rounds":3,"produced":15,"fetched":15,"keyPrefix":"live-"}
//
// With -wait-stdin the broker's address is printed first
// ("broker 127.0.0.1:PORT") and the clients start after a line is read
// from standard input, so that a capture can be started in between.

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// trafficConfig holds the -traffic mode's flags.
type trafficConfig struct {
	port      int
	duration  time.Duration
	interval  time.Duration
	records   int
	topic     string
	waitStdin bool
	keylog    string // TLS, with the clients' key log appended to this file
}

// trafficReport is the JSON line printed at the end.
type trafficReport struct {
	Broker    string `json:"broker"`
	Topic     string `json:"topic"`
	Rounds    int    `json:"rounds"`
	Produced  int    `json:"produced"`
	Fetched   int    `json:"fetched"`
	KeyPrefix string `json:"keyPrefix"`
}

const trafficKeyPrefix = "live-"

func trafficMain(args []string) int {
	fs := flag.NewFlagSet("capgen -traffic", flag.ContinueOnError)
	var cfg trafficConfig
	fs.IntVar(&cfg.port, "port", 9092, "broker port on 127.0.0.1 (0: any free port)")
	fs.DurationVar(&cfg.duration, "duration", 0, "keep producing and fetching this long (0: one round)")
	fs.DurationVar(&cfg.interval, "interval", 200*time.Millisecond, "pause between rounds")
	fs.IntVar(&cfg.records, "records", 5, "records per round (one Produce request)")
	fs.StringVar(&cfg.topic, "topic", "kwire-live", "topic (one partition)")
	fs.BoolVar(&cfg.waitStdin, "wait-stdin", false, `print "broker ADDR" and wait for a line on stdin before the clients start`)
	fs.StringVar(&cfg.keylog, "keylog", "", "serve TLS and append the clients' TLS key log (NSS format) to `FILE`, created when the clients start")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.records < 1 {
		fmt.Fprintln(os.Stderr, "capgen -traffic: -records must be at least 1")
		return 2
	}
	log.SetFlags(log.Ltime)
	rep, err := runTraffic(cfg)
	if err != nil {
		log.Printf("traffic: %v", err)
		return 1
	}
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return 0
}

func runTraffic(cfg trafficConfig) (*trafficReport, error) {
	var (
		c     *kfake.Cluster
		err   error
		extra []kgo.Opt
	)
	if cfg.keylog != "" {
		c, err = tlsCluster(cfg.port, &tls.Config{MinVersion: tls.VersionTLS12}, cfg.topic)
	} else {
		c, err = newCluster(cfg.port, kfake.SeedTopics(1, cfg.topic))
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	broker := addr(cfg.port)
	if addrs := c.ListenAddrs(); len(addrs) == 1 {
		broker = addrs[0] // the port chosen for -port 0
	}
	rep := &trafficReport{Broker: broker, Topic: cfg.topic, KeyPrefix: trafficKeyPrefix}
	if cfg.waitStdin {
		fmt.Printf("broker %s\n", broker)
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return nil, fmt.Errorf("waiting for stdin: %w", err)
		}
	}

	if cfg.keylog != "" {
		kl, err := os.OpenFile(cfg.keylog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		defer kl.Close()
		extra = append(extra, kgo.DialTLSConfig(clientTLS(kl, tls.VersionTLS12, 0)))
	}
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(broker), kgo.ClientID("kwire-live-producer"),
		kgo.DefaultProduceTopic(cfg.topic), kgo.ManualFlushing()}, extra...)...)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	cons, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(broker), kgo.ClientID("kwire-live-consumer"),
		kgo.ConsumeTopics(cfg.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, extra...)...)
	if err != nil {
		return nil, err
	}
	defer cons.Close()

	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+time.Minute)
	defer cancel()
	end := time.Now().Add(cfg.duration)
	for rep.Rounds == 0 || time.Now().Before(end) {
		if rep.Rounds > 0 {
			time.Sleep(cfg.interval)
		}
		if err := produceRound(ctx, prod, rep.Produced, cfg.records); err != nil {
			return nil, fmt.Errorf("round %d: produce: %w", rep.Rounds+1, err)
		}
		rep.Produced += cfg.records
		for rep.Fetched < rep.Produced {
			sctx, scancel := context.WithTimeout(ctx, stepTimeout)
			fs := cons.PollFetches(sctx)
			err := sctx.Err()
			scancel()
			if err != nil {
				return nil, fmt.Errorf("round %d: fetched %d of %d records: %w", rep.Rounds+1, rep.Fetched, rep.Produced, err)
			}
			fs.EachError(func(t string, p int32, err error) { log.Printf("fetch error %s/%d: %v", t, p, err) })
			rep.Fetched += fs.NumRecords()
		}
		rep.Rounds++
	}
	// Close the clients first, so that their connections end with FINs
	// while the broker still runs.
	cons.Close()
	prod.Close()
	time.Sleep(100 * time.Millisecond)
	return rep, nil
}

// produceRound buffers n records and flushes them as one request.
func produceRound(ctx context.Context, cl *kgo.Client, first, n int) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		perr error
	)
	for i := range n {
		seq := strconv.Itoa(first + i)
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{
			Key:   []byte(trafficKeyPrefix + seq),
			Value: []byte("kwire live test record " + seq),
		}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	wg.Wait()
	return perr
}
