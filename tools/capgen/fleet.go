package main

// The fleet benchmark capture (-bench -bench-fleet): what a broker of a
// busy cluster sees, many real clients and small exchanges rather than a
// few connections moving large batches. On the -bench cluster (kfake,
// -bench-brokers brokers from -bench-port):
//
//   - -bench-fleet-members kgo consumers in one group, fetching from
//     every partition and committing every second (Fetch long polls,
//     Heartbeat, OffsetCommit, the JoinGroup/SyncGroup of the rebalances
//     as members join);
//   - -bench-fleet-producers kgo producers with linger 0 and acks=all,
//     each sending one small record (-bench-value-size bytes, default
//     100 for the fleet) every -bench-fleet-interval: one Produce request
//     per record;
//   - -bench-fleet-admins admin clients each asking for the cluster's
//     Metadata every -bench-fleet-interval;
//
// for -bench-fleet-duration, after which the clients leave (LeaveGroup)
// and the cluster stops. mk/bench.mk records it as fleet.pcap.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// fleetConfig sizes the fleet traffic.
type fleetConfig struct {
	on        bool
	members   int
	producers int
	admins    int
	interval  time.Duration
	duration  time.Duration
}

func fleetFlags(c *benchConfig, fs interface {
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	f := &c.fleet
	fs.BoolVar(&f.on, "bench-fleet", false, "bench: a fleet of small clients instead of large batches: a consumer group, producers with linger 0, admin clients polling Metadata (fleet.go)")
	fs.IntVar(&f.members, "bench-fleet-members", 100, "bench-fleet: consumer group members")
	fs.IntVar(&f.producers, "bench-fleet-producers", 20, "bench-fleet: producers (linger 0, acks=all, one record per request)")
	fs.IntVar(&f.admins, "bench-fleet-admins", 10, "bench-fleet: admin clients polling Metadata")
	fs.DurationVar(&f.interval, "bench-fleet-interval", 200*time.Millisecond, "bench-fleet: time between two records of a producer, two Metadata requests of an admin client")
	fs.DurationVar(&f.duration, "bench-fleet-duration", time.Minute, "bench-fleet: how long the fleet runs")
}

// fleetTraffic runs the fleet against the cluster whose brokers listen
// on ports.
func fleetTraffic(cfg benchConfig, ports []int, maxv *kversion.Versions, tlsOpt kgo.Opt) error {
	f := cfg.fleet
	if f.members < 0 || f.producers < 0 || f.admins < 0 || f.interval <= 0 || f.duration <= 0 {
		return errors.New("bench-fleet: counts must not be negative, interval and duration must be positive")
	}
	common := benchClientOpts(ports, maxv, tlsOpt)
	ctx, cancel := context.WithTimeout(context.Background(), f.duration)
	defer cancel()

	var wg sync.WaitGroup
	var produced, consumed, metadata atomic.Int64
	errs := make(chan error, f.members+f.producers+f.admins)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for i := range f.members {
		cl, err := kgo.NewClient(append(slices.Clip(common), kgo.ClientID(fmt.Sprintf("capgen-fleet-member-%d", i)),
			kgo.ConsumerGroup("capgen-fleet"), kgo.ConsumeTopics("capgen-bench"),
			kgo.AutoCommitInterval(time.Second), kgo.FetchMaxWait(500*time.Millisecond))...)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close() // leaves the group
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachError(func(t string, p int32, err error) {
					if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
						log.Printf("bench-fleet: fetch %s/%d: %v", t, p, err)
					}
				})
				consumed.Add(int64(fs.NumRecords()))
			}
		}()
		// Members join one after another, as a deployment rolls out,
		// not in one storm of JoinGroups.
		time.Sleep(f.duration / time.Duration(4*max(f.members, 1)))
	}
	for i := range f.producers {
		cl, err := kgo.NewClient(append(slices.Clip(common), kgo.ClientID(fmt.Sprintf("capgen-fleet-producer-%d", i)),
			kgo.DefaultProduceTopic("capgen-bench"), kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerBatchCompression(kgo.NoCompression()))...)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer cl.Close()
			t := time.NewTicker(f.interval)
			defer t.Stop()
			for j := int64(0); ; j++ {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				v := benchValue(i, j, cfg.valueSize)
				if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "f%d-%d", i, j), Value: v}).FirstErr(); err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("producer %d: %w", i, err))
					}
					return
				}
				produced.Add(1)
			}
		}(i)
	}
	for i := range f.admins {
		cl, err := kgo.NewClient(append(slices.Clip(common), kgo.ClientID(fmt.Sprintf("capgen-fleet-admin-%d", i)))...)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			t := time.NewTicker(f.interval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				req := kmsg.NewPtrMetadataRequest()
				topic := kmsg.NewMetadataRequestTopic()
				topic.Topic = kmsg.StringPtr("capgen-bench")
				req.Topics = append(req.Topics, topic)
				if _, err := req.RequestWith(ctx, cl); err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("admin: %w", err))
					}
					return
				}
				metadata.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	if f.producers > 0 && produced.Load() == 0 || f.admins > 0 && metadata.Load() == 0 {
		return fmt.Errorf("bench-fleet: %d records produced, %d Metadata answered", produced.Load(), metadata.Load())
	}
	log.Printf("bench-fleet: %d members consumed %d records, %d producers produced %d, %d admin clients had %d Metadata answers in %v",
		f.members, consumed.Load(), f.producers, produced.Load(), f.admins, metadata.Load(), f.duration)
	return nil
}
