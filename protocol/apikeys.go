package protocol

// API keys kwire's packages refer to by number, as Kafka assigns them
// (ApiKeys.java; the apiKey of each message's JSON file). Every other key
// is known by its schema only (APIName, Lookup).
const (
	KeyProduce                   int16 = 0
	KeyFetch                     int16 = 1
	KeyListOffsets               int16 = 2
	KeyMetadata                  int16 = 3
	KeyControlledShutdown        int16 = 7
	KeyOffsetCommit              int16 = 8
	KeyOffsetFetch               int16 = 9
	KeyFindCoordinator           int16 = 10
	KeyJoinGroup                 int16 = 11
	KeyHeartbeat                 int16 = 12
	KeyLeaveGroup                int16 = 13
	KeySyncGroup                 int16 = 14
	KeyDescribeGroups            int16 = 15
	KeyListGroups                int16 = 16
	KeySaslHandshake             int16 = 17
	KeyApiVersions               int16 = 18
	KeyCreateTopics              int16 = 19
	KeyDeleteTopics              int16 = 20
	KeyInitProducerId            int16 = 22
	KeyAddPartitionsToTxn        int16 = 24
	KeyAddOffsetsToTxn           int16 = 25
	KeyEndTxn                    int16 = 26
	KeyTxnOffsetCommit           int16 = 28
	KeyDescribeAcls              int16 = 29
	KeyDescribeConfigs           int16 = 32
	KeyAlterConfigs              int16 = 33
	KeySaslAuthenticate          int16 = 36
	KeyDeleteGroups              int16 = 42
	KeyIncrementalAlterConfigs   int16 = 44
	KeyEnvelope                  int16 = 58
	KeyDescribeTransactions      int16 = 65
	KeyListTransactions          int16 = 66
	KeyConsumerGroupHeartbeat    int16 = 68
	KeyConsumerGroupDescribe     int16 = 69
	KeyDescribeTopicPartitions   int16 = 75
	KeyShareGroupHeartbeat       int16 = 76
	KeyShareGroupDescribe        int16 = 77
	KeyShareFetch                int16 = 78
	KeyStreamsGroupHeartbeat     int16 = 88
	KeyStreamsGroupDescribe      int16 = 89
	KeyFetchSnapshot             int16 = 59
	KeyDescribeProducers         int16 = 61
	KeyAlterUserScramCredentials int16 = 51
)
