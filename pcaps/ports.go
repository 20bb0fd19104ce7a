package pcaps

// BrokerPorts returns the TCP ports the brokers of the golden captures may
// listen on: tools/capgen gives each scenario one or two ports of its own
// from 19092 up (pcaps/README.md), and this range leaves room for
// scenarios to come. Tests that dissect every golden capture by port use
// it, so that a new capture needs no change to them.
func BrokerPorts() []uint16 {
	ports := make([]uint16, 0, 28)
	for p := uint16(19092); p < 19120; p++ {
		ports = append(ports, p)
	}
	return ports
}
