// Package pcaps holds kwire's golden captures (see README.md) and the tests
// that run `kwire read` over them: golden outputs per capture and output
// mode (golden/), an independent decoding with franz-go's kmsg to compare
// with kwire's JSON, and checks that the captures hold what the tests rely
// on. Its only code is BrokerPorts, the broker ports of the captures, and
// KeyLog, the TLS key log beside a capture.
package pcaps
