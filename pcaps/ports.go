package pcaps

import (
	"os"
	"path/filepath"
	"strings"
)

// BrokerPorts returns the TCP ports the brokers of the golden captures may
// listen on: tools/capgen gives each scenario one or more ports of its own
// (pcaps/README.md), the first captures from 19092 up, the TLS captures
// with key logs from 19310 up, the captures of operators' situations
// (groups, transactions, throttling, leader moves, network or broker) from
// 19340 up; the ranges leave room for scenarios to come. Tests that
// dissect every golden capture by port use it, so that a new capture needs
// no change to them.
func BrokerPorts() []uint16 {
	ports := make([]uint16, 0, 68)
	for p := uint16(19092); p < 19120; p++ {
		ports = append(ports, p)
	}
	for p := uint16(19310); p < 19330; p++ {
		ports = append(ports, p)
	}
	for p := uint16(19340); p < 19360; p++ {
		ports = append(ports, p)
	}
	return ports
}

// KeyLog returns the path of a capture's TLS key log (the capture's name
// with .keylog for its extension) and whether there is one.
func KeyLog(capture string) (string, bool) {
	p := strings.TrimSuffix(capture, filepath.Ext(capture)) + ".keylog"
	_, err := os.Stat(p)
	return p, err == nil
}
