//go:build !unix

package main

// watchBrokenPipe does nothing where there is no SIGPIPE (Windows): a
// write to a closed pipe fails, and the command ends through its error.
func (p *profiler) watchBrokenPipe() func() { return func() {} }

// exitBrokenPipe is what a SIGPIPE's exit status would be; unused where
// brokenPipe is always false.
const exitBrokenPipe = 141

// brokenPipe is false: without SIGPIPE, a write error is reported as any.
func brokenPipe(error) bool { return false }
