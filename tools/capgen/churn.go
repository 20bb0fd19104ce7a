package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Misbehaving clients: a Metadata storm and connection churn
// (metadata-storm.pcap); clients that skip ApiVersions and send versions
// the broker never advertised (skipped-apiversions.pcap).

const (
	stormTopic    = "capgen-storm"
	stormDuration = 3 * time.Second
	stormRefresh  = 50 * time.Millisecond
	churnClients  = 20
)

func runMetadataStorm(ports []int, x *expectation) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(1, stormTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = fmt.Sprintf("capgen-sarama-metadata-storm refreshes all metadata every %v for %v (sarama Metadata.RefreshFrequency) "+
		"on one connection; capgen-kgo-churn is %d kgo clients in turn, each producing one record on a connection of its own and closing "+
		"(a producer per message); capgen-kgo-steady produces as many records on one client for comparison.",
		stormRefresh, stormDuration, churnClients)
	x.Varies = []string{"timestamps and TCP ports", "the exact number of Metadata requests (timer driven)"}
	brokers := []string{addr(port)}

	x.client("capgen-sarama-metadata-storm", "IBM/sarama v1.61.1 (Version 2.1.0)", fmt.Sprintf("Metadata every %v", stormRefresh))
	cfg := saramaConfig("capgen-sarama-metadata-storm")
	cfg.Metadata.RefreshFrequency = stormRefresh
	cfg.Metadata.Full = true
	cl, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(stormDuration)
	cl.Close()
	x.logf("capgen-sarama-metadata-storm", "client open for %v with Metadata.RefreshFrequency %v", time.Since(start).Round(time.Millisecond), stormRefresh)

	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	x.client("capgen-kgo-churn", "franz-go kgo v1.22.3", fmt.Sprintf("%d clients in turn, one record and one connection each", churnClients))
	for i := 0; i < churnClients; i++ {
		if err := produceKgo(ctx, []kgo.Opt{kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-kgo-churn"),
			kgo.DefaultProduceTopic(stormTopic), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DisableClientMetrics()},
			[]*kgo.Record{{Key: []byte(fmt.Sprintf("churn-%02d", i)), Value: []byte("one connection per record")}}); err != nil {
			return err
		}
	}
	x.logf("capgen-kgo-churn", "%d clients opened and closed", churnClients)
	x.client("capgen-kgo-steady", "franz-go kgo v1.22.3", fmt.Sprintf("one client, %d records", churnClients))
	steady, err := kgo.NewClient(kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-kgo-steady"), kgo.DefaultProduceTopic(stormTopic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DisableClientMetrics())
	if err != nil {
		return err
	}
	defer steady.Close()
	for i := 0; i < churnClients; i++ {
		if err := steady.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("steady-%02d", i)), Value: []byte("one connection")}).FirstErr(); err != nil {
			return err
		}
	}
	steady.Close()
	x.requests("Metadata v7", "Metadata v13", "Produce v13")
	x.Wire.MinRequests = map[string]int{"capgen-sarama-metadata-storm Metadata": int(stormDuration/stormRefresh) / 2}
	// Each churn client opens a bootstrap connection and one to the
	// broker it learnt (the same broker): two per client.
	x.Wire.MinConnections = map[string]int{"capgen-kgo-churn": churnClients}
	x.Wire.NoOtherErrors = true
	return nil
}

func runSkippedApiVersions(ports []int, x *expectation) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(1, stormTopic), kfake.MaxVersions(kversion.V2_1_0()))
	if err != nil {
		return err
	}
	defer c.Close()
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = "The broker advertises Kafka 2.1's versions (kfake.MaxVersions). capgen-sarama-no-apiversions (sarama, Version 2.1.0, " +
		"ApiVersionsRequest false) produces and reads back without ever sending ApiVersions; capgen-raw-no-apiversions sends Metadata v1 " +
		"as the first request of its connection; capgen-raw-unadvertised asks ApiVersions, then sends Metadata one version above the advertised " +
		"maximum (which kfake does not answer: it closes the connection), and capgen-sarama-newer-than-broker (sarama, Version 3.6.0, " +
		"ApiVersionsRequest false) sends its own newer versions unasked."
	x.Varies = []string{"timestamps and TCP ports"}
	brokers := []string{addr(port)}

	x.client("capgen-sarama-no-apiversions", "IBM/sarama v1.61.1 (Version 2.1.0)", "skips ApiVersions (ApiVersionsRequest = false)")
	cfg := saramaConfig("capgen-sarama-no-apiversions")
	cfg.ApiVersionsRequest = false
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: stormTopic, Key: sarama.StringEncoder(fmt.Sprintf("no-apiversions-%d", i)),
			Value: sarama.StringEncoder("never asked")}); err != nil {
			p.Close()
			return err
		}
	}
	p.Close()
	x.logf("capgen-sarama-no-apiversions", "3 records produced without ApiVersions")

	// A raw connection whose first request is Metadata v1.
	x.client("capgen-raw-no-apiversions", "capgen raw client (kmsg)", "Metadata v1 as its connection's first request")
	rc, err := dialRaw(port, "capgen-raw-no-apiversions")
	if err != nil {
		return err
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(stormTopic)
	md.Topics = append(md.Topics, mt)
	mresp := kmsg.NewPtrMetadataResponse()
	mresp.Version = 1
	err = rc.roundTrip(md, mresp, false)
	rc.close()
	if err != nil {
		return fmt.Errorf("raw Metadata v1: %w", err)
	}
	x.logf("capgen-raw-no-apiversions", "Metadata v1 answered: %d brokers, %d topics", len(mresp.Brokers), len(mresp.Topics))

	// A raw connection that asks, then goes above the advertised range.
	x.client("capgen-raw-unadvertised", "capgen raw client (kmsg)", "Metadata one version above the advertised maximum")
	rc, err = dialRaw(port, "capgen-raw-unadvertised")
	if err != nil {
		return err
	}
	defer rc.close()
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 2
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 2
	if err := rc.roundTrip(av, avr, false); err != nil {
		return fmt.Errorf("raw ApiVersions v2: %w", err)
	}
	maxMD := int16(-1)
	for _, k := range avr.ApiKeys {
		if k.ApiKey == int16(kmsg.Metadata) {
			maxMD = k.MaxVersion
		}
	}
	if maxMD < 0 {
		return errors.New("the broker does not advertise Metadata")
	}
	md = kmsg.NewPtrMetadataRequest()
	md.Version = maxMD + 1
	md.Topics = append(md.Topics, mt)
	x.inject(&expectInjection{Kind: "unadvertised-version", API: "Metadata", ClientID: "capgen-raw-unadvertised",
		Note: fmt.Sprintf("Metadata v%d sent after ApiVersions advertised Metadata up to v%d", maxMD+1, maxMD), Count: 1})
	if _, err := rc.send(md); err != nil {
		return err
	}
	_, rerr := rc.readFrame()
	x.logf("capgen-raw-unadvertised", "ApiVersions v2 advertised Metadata up to v%d; Metadata v%d got: %v", maxMD, maxMD+1, rerr)

	// sarama configured newer than the broker, never asking.
	x.client("capgen-sarama-newer-than-broker", "IBM/sarama v1.61.1 (Version 3.6.0)", "skips ApiVersions and uses Kafka 3.6 request versions")
	ncfg := saramaConfig("capgen-sarama-newer-than-broker")
	ncfg.Version = sarama.V3_6_0_0
	ncfg.ApiVersionsRequest = false
	ncl, err := sarama.NewClient(brokers, ncfg)
	if err != nil {
		x.logf("capgen-sarama-newer-than-broker", "client: %v", err)
	} else {
		err := ncl.RefreshMetadata(stormTopic)
		x.logf("capgen-sarama-newer-than-broker", "metadata refresh: %v", err)
		ncl.Close()
	}
	x.requests("Metadata v1", "Metadata v7", "Produce v7", "ApiVersions v2", fmt.Sprintf("Metadata v%d", maxMD+1))
	x.Wire.SkipsApiVersions = []string{"capgen-sarama-no-apiversions", "capgen-raw-no-apiversions", "capgen-sarama-newer-than-broker"}
	x.Wire.Unadvertised = []string{fmt.Sprintf("Metadata v%d", maxMD+1)}
	return nil
}
