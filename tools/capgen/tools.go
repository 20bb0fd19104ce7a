package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"sync"
)

var aptUpdate sync.Once

// ensureTool returns the path of command name, installing Debian package
// pkg with apt-get first when it is missing and we run as root.
func ensureTool(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%s not found; install the Debian package %s", name, pkg)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("%s not found and no apt-get to install %s", name, pkg)
	}
	var updErr error
	aptUpdate.Do(func() {
		log.Printf("apt-get update")
		updErr = run("apt-get", "update", "-qq")
	})
	if updErr != nil {
		return "", updErr
	}
	log.Printf("apt-get install %s", pkg)
	if err := run("apt-get", "install", "-y", "-qq", pkg); err != nil {
		return "", err
	}
	return exec.LookPath(name)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}
