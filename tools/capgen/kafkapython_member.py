"""A kafka-python group member for capgen's group-rebalance scenario.

Run by rebalance_proc.go as
`python3 kafkapython_member.py HOST:PORT GROUP TOPIC CLIENT_ID SESSION_MS HEARTBEAT_MS`.
Prints one JSON line per rebalance callback (on_partitions_revoked,
on_partitions_assigned) with the member ID and generation kafka-python
holds at that moment, polls until it reads "leave" on standard input, then
closes the consumer (which commits and sends LeaveGroup) and prints
{"event": "closed"}.
"""

import json
import select
import sys

from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener


def main():
    bootstrap, group, topic, client_id, session_ms, heartbeat_ms = sys.argv[1:7]
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id=client_id,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=True,
        auto_commit_interval_ms=1000,
        session_timeout_ms=int(session_ms),
        heartbeat_interval_ms=int(heartbeat_ms),
        fetch_max_wait_ms=500,
    )

    def emit(event, partitions):
        # The generation kafka-python's coordinator holds: the new one in
        # on_partitions_assigned, the ending one in on_partitions_revoked.
        gen = consumer._coordinator._generation
        assigned = {}
        for tp in partitions:
            assigned.setdefault(tp.topic, []).append(tp.partition)
        print(json.dumps({
            "event": event,
            "memberId": gen.member_id if gen else "",
            "generation": gen.generation_id if gen else -1,
            "assigned": assigned,
        }), flush=True)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit("revoked", revoked)

        def on_partitions_assigned(self, assigned):
            emit("assigned", assigned)

    consumer.subscribe([topic], listener=Listener())
    while True:
        consumer.poll(timeout_ms=100)
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if ready:
            line = sys.stdin.readline()
            if line == "" or line.strip() == "leave":
                break
    consumer.close()
    print(json.dumps({"event": "closed"}), flush=True)


if __name__ == "__main__":
    main()
