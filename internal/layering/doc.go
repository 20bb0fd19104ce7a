// Package layering holds only tests, the one place that keeps kwire's
// dependency graph flowing one way (see the package docs of protocol,
// reassembly, dissect and render): TestLayering checks what each layer may
// depend on, directly or not; TestDirectImports what each package's own
// files may import; TestPcapNeedsTag keeps libpcap and cgo behind the pcap
// build tag; TestRenderNeverDecodes keeps decoder calls out of render.
package layering
