//go:build !linux && !pcap

package live

import (
	"net"
	"runtime"
)

// Backend names the capture mechanism of this build.
const Backend = "none"

func openHandle(cfg *Config) (handle, error) {
	// Parse the filter anyway, so that its errors read the same everywhere.
	if cfg.Filter != "" {
		if _, err := parseFilter(cfg.Filter); err != nil {
			return nil, err
		}
	}
	return nil, unsupportedError(runtime.GOOS)
}

// interfaceNames lists the system's interfaces, for shell completion: this
// build cannot capture on any of them, but the names are still the ones a
// libpcap build would take.
func interfaceNames() []string {
	var names []string
	ifcs, _ := net.Interfaces()
	for _, ifc := range ifcs {
		names = append(names, ifc.Name)
	}
	return sortedNames(names)
}

func permissionFix(need, exe string) string {
	return "capturing packets needs " + need + ": run kwire as root"
}
