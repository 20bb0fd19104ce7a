// A KafkaJS group member for capgen's group-rebalance scenario.
//
// Run by ../rebalance_proc.go as
// `node member.js HOST:PORT GROUP TOPIC CLIENT_ID SESSION_MS HEARTBEAT_MS`
// from this directory. Prints one JSON line per GROUP_JOIN event (KafkaJS
// emits one after every JoinGroup and SyncGroup with the member's
// assignment; it does not say the generation: -1), consumes until it reads
// "leave" on standard input, then disconnects (LeaveGroup) and prints
// {"event":"closed"}.
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const readline = require('readline')
const { Kafka, logLevel } = require('kafkajs')

async function main() {
  const [broker, groupId, topic, clientId, sessionMs, heartbeatMs] = process.argv.slice(2)
  const kafka = new Kafka({ clientId, brokers: [broker], logLevel: logLevel.ERROR })
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: Number(sessionMs),
    heartbeatInterval: Number(heartbeatMs),
    maxWaitTimeInMs: 500,
  })
  const emit = o => process.stdout.write(JSON.stringify(o) + '\n')
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assigned = {}
    for (const [t, ps] of Object.entries(payload.memberAssignment)) {
      assigned[t] = ps
    }
    emit({ event: 'assigned', memberId: payload.memberId, generation: -1, leader: payload.isLeader, assigned })
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
  const rl = readline.createInterface({ input: process.stdin })
  for await (const line of rl) {
    if (line.trim() === 'leave') {
      break
    }
  }
  await consumer.disconnect()
  emit({ event: 'closed' })
}

main().then(
  () => process.exit(0),
  err => {
    console.error(err)
    process.exit(1)
  }
)
