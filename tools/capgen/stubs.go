package main

import (
	"errors"
	"flag"
)

var errTODO = errors.New("not yet")

func runSarama([]int) error             { return errTODO }
func runKafkaGo([]int) error            { return errTODO }
func runKcat([]int) error               { return errTODO }
func runLargeValue([]int) error         { return errTODO }
func runMixedVersions([]int) error      { return errTODO }
func runUnsupportedVersions([]int) error { return errTODO }
func runSaslPlain([]int) error          { return errTODO }
func runSaslScram([]int) error          { return errTODO }
func runSaslV0([]int) error             { return errTODO }

type benchConfig struct{}

func benchFlags(*flag.FlagSet) *benchConfig                 { return &benchConfig{} }
func runBench(benchConfig, string, string) error { return errTODO }
