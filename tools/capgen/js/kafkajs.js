// capgen's kafkajs scenario: KafkaJS against kfake.
//
// Run by ../clients.go as `node kafkajs.js HOST:PORT` from this directory;
// kfake is already listening there. Prints the number of records the group
// consumer read on its last line. Content follows the codec matrix of
// pcaps/README.md (common.go's value and codecRecords): per codec 4 keyed
// records with headers `codec` and `seq`, one with a null key, one
// tombstone.
//
// KafkaJS compresses with gzip by itself; snappy comes from kafkajs-snappy
// (pure JavaScript), lz4 (frame format) from lz4js and zstd from zstd-codec
// (WebAssembly), registered here as KafkaJS codecs. KafkaJS's own lz4 and
// zstd plugins need native builds that fail with this Node.
'use strict'

// KafkaJS warns on stderr about its v2 default partitioner otherwise.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const fs = require('fs')
const tls = require('tls')
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const lz4 = require('lz4js')
const { ZstdCodec } = require('zstd-codec')

const LIB = 'kafkajs'
const TOPIC = 'capgen-kafkajs'
const GROUP = 'capgen-kafkajs-group'
const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

const value = (codec, i) =>
  Buffer.from(`${LIB} ${codec} record ${i}: the quick brown fox jumps over the lazy dog. `.repeat(4))

function records(codec) {
  const out = []
  for (let i = 0; i < 4; i++) {
    out.push({ key: `${LIB}-${codec}-key-${i}`, value: value(codec, i), headers: { codec, seq: String(i) } })
  }
  out.push({ key: null, value: value(codec, 4) })
  out.push({ key: `${LIB}-${codec}-tombstone`, value: null })
  return out
}

// registerCodecs adds snappy, lz4 and zstd to KafkaJS's codec table.
async function registerCodecs() {
  CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
  CompressionCodecs[CompressionTypes.LZ4] = () => ({
    async compress(encoder) {
      return Buffer.from(lz4.compress(encoder.buffer))
    },
    async decompress(buffer) {
      return Buffer.from(lz4.decompress(buffer))
    },
  })
  const zstd = await new Promise(resolve => ZstdCodec.run(z => resolve(new z.Simple())))
  CompressionCodecs[CompressionTypes.ZSTD] = () => ({
    async compress(encoder) {
      return Buffer.from(zstd.compress(encoder.buffer, 3))
    },
    async decompress(buffer) {
      return Buffer.from(zstd.decompress(buffer))
    },
  })
}

// With a third argument "tls" the broker is a TLS listener: the
// certificate is not checked and every socket's keylog event (Node's
// tls.TLSSocket, NSS key log lines) is appended to $SSLKEYLOGFILE.
const useTLS = process.argv[3] === 'tls'

const tlsSocket = ({ host, port, ssl, onConnect }) => {
  const socket = tls.connect(Object.assign({ host, port, servername: undefined }, ssl), onConnect)
  socket.on('keylog', (line) => fs.appendFileSync(process.env.SSLKEYLOGFILE, line))
  socket.setKeepAlive(true, 60000)
  return socket
}

const client = (broker, clientId) =>
  new Kafka(Object.assign(
    { clientId, brokers: [broker], logLevel: logLevel.WARN, retry: { retries: 3 } },
    useTLS ? { ssl: { rejectUnauthorized: false }, socketFactory: tlsSocket } : {},
  ))

async function main() {
  const broker = process.argv[2]
  await registerCodecs()

  const admin = client(broker, 'capgen-kafkajs-admin').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }] })
  await admin.fetchTopicMetadata({ topics: [TOPIC] })

  let want = 0
  for (const [codec, compression] of Object.entries(CODECS)) {
    // The zstd producer is idempotent (InitProducerId, producer ID and
    // sequence numbers in its batch), the others are not.
    const idempotent = codec === 'zstd'
    const producer = client(broker, `capgen-kafkajs-${codec}`).producer({
      allowAutoTopicCreation: false,
      idempotent,
      maxInFlightRequests: idempotent ? 1 : undefined,
    })
    await producer.connect()
    const messages = records(codec)
    want += messages.length
    await producer.send({ topic: TOPIC, acks: -1, compression, messages })
    await producer.disconnect()
  }

  const consumer = client(broker, 'capgen-kafkajs-consumer').consumer({
    groupId: GROUP,
    sessionTimeout: 6000,
    heartbeatInterval: 200,
    maxWaitTimeInMs: 200,
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true })
  let got = 0
  const done = new Promise(resolve => {
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        got++
        if (got === want) {
          await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
          resolve()
        }
      },
    })
  })
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`read ${got} of ${want}`)), 20000))
  await Promise.race([done, timeout])
  // A few heartbeats while the member sits in the group.
  await new Promise(resolve => setTimeout(resolve, 700))
  await consumer.disconnect() // LeaveGroup

  await admin.listGroups()
  await admin.describeGroups([GROUP])
  await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
  await admin.fetchTopicOffsets(TOPIC)
  await admin.disconnect()
  console.log(got)
}

main().then(
  () => process.exit(0),
  err => {
    console.error(err)
    process.exit(1)
  }
)
