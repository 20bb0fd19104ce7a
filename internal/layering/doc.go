// Package layering holds only a test: it keeps kwire's dependency graph
// flowing one way (see the package docs of protocol, reassembly, dissect and
// render).
package layering
