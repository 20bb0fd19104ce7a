"""capgen's kafkapython scenario: kafka-python (Debian's python3-kafka) against kfake.

Run by clients.go as `python3 kafkapython.py HOST:PORT [tls]`; kfake is
already listening there (with "tls", a TLS listener: security_protocol SSL,
the certificate not checked, the keys logged to $SSLKEYLOGFILE by Python's
ssl module). Prints the number of records the group consumer read on its
last line. Content follows the codec matrix of pcaps/README.md (common.go's
value and codecRecords): per codec 4 keyed records with headers `codec` and
`seq`, one with a null key, one tombstone.
"""

import ssl
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.structs import TopicPartition

LIB = "kafkapython"
TOPIC = "capgen-kafkapython"
GROUP = "capgen-kafkapython-group"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def value(codec, i):
    line = "%s %s record %d: the quick brown fox jumps over the lazy dog. " % (LIB, codec, i)
    return (line * 4).encode()


def records(codec):
    out = []
    for i in range(4):
        out.append((("%s-%s-key-%d" % (LIB, codec, i)).encode(), value(codec, i),
                    [("codec", codec.encode()), ("seq", str(i).encode())]))
    out.append((None, value(codec, 4), []))
    out.append((("%s-%s-tombstone" % (LIB, codec)).encode(), None, []))
    return out


def tls_options():
    """kafka-python options for a TLS listener, or none."""
    if len(sys.argv) < 3 or sys.argv[2] != "tls":
        return {}
    # create_default_context sets keylog_filename from SSLKEYLOGFILE.
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return {"security_protocol": "SSL", "ssl_context": ctx}


def main():
    bootstrap = sys.argv[1]
    extra = tls_options()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="capgen-kafkapython-admin", **extra)
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=1)])
    admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])

    want = 0
    for codec in CODECS:
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            client_id="capgen-kafkapython-" + codec,
            compression_type=None if codec == "none" else codec,
            acks="all",
            linger_ms=50,
            **extra,
        )
        for key, val, headers in records(codec):
            producer.send(TOPIC, key=key, value=val, headers=headers, partition=0)
            want += 1
        producer.flush(timeout=20)
        producer.close(timeout=20)

    consumer = KafkaConsumer(
        TOPIC,
        bootstrap_servers=bootstrap,
        client_id="capgen-kafkapython-consumer",
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=200,
        fetch_max_wait_ms=200,
        **extra,
    )
    got = 0
    deadline = time.time() + 20
    while got < want and time.time() < deadline:
        for recs in consumer.poll(timeout_ms=500).values():
            got += len(recs)
    consumer.commit()
    # A few heartbeats while the member sits in the group.
    end = time.time() + 0.7
    while time.time() < end:
        consumer.poll(timeout_ms=100)
    consumer.close()  # LeaveGroup

    admin.list_consumer_groups()
    admin.describe_consumer_groups([GROUP])
    admin.list_consumer_group_offsets(GROUP, partitions=[TopicPartition(TOPIC, 0)])
    admin.close()
    print(got)


if __name__ == "__main__":
    main()
