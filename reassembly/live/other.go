//go:build !linux && !pcap

package live

import (
	"fmt"
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
	return nil, fmt.Errorf("%w on %s: build kwire with -tags pcap (libpcap) to capture here", ErrUnsupported, runtime.GOOS)
}

func permissionFix(need, exe string) string {
	return "capturing packets needs " + need + ": run kwire as root"
}
