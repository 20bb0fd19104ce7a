package main

import (
	"errors"
	"flag"
)

var errTODO = errors.New("not yet")

type benchConfig struct{}

func benchFlags(*flag.FlagSet) *benchConfig { return &benchConfig{} }
func runBench(benchConfig, string, string) error { return errTODO }
