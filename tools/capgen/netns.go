package main

import "errors"

const envInNetns = "CAPGEN_SCENARIO_IN_NETNS"

func runInNetns(s scenario, out string) error { return errors.New("todo") }
