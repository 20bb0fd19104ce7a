package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Client libraries that are not Go: kafka-python (Debian's python3-kafka)
// and KafkaJS (npm, installed under js/). Each scenario starts kfake and
// runs a script of its own (kafkapython.py, js/kafkajs.js) that produces
// the codec matrix, reads it back in a consumer group and makes a few admin
// calls; the script prints the number of records it consumed on its last
// line.

// scriptTimeout bounds one client script.
const scriptTimeout = 2 * time.Minute

// kafkapythonPackages are the Debian packages the kafka-python scenario
// needs: the library and the codec modules it imports when present
// (without them it refuses snappy, lz4 and zstd).
var kafkapythonPackages = []string{"python3-kafka", "python3-snappy", "python3-lz4", "python3-zstandard"}

// runKafkaPython drives kafka-python 2.0.2 through kafkapython.py.
func runKafkaPython(ports []int) error {
	return runScripted(ports[0], ensurePython, ".", "kafkapython.py")
}

// runKafkaJS drives KafkaJS 2.2.4 through js/kafkajs.js.
func runKafkaJS(ports []int) error {
	return runScripted(ports[0], ensureKafkaJS, "js", "kafkajs.js")
}

// runScripted starts a kfake cluster on port and runs script in dir with
// the interpreter ensure installs, expecting the codec matrix back (6
// records per codec).
func runScripted(port int, ensure func() (string, error), dir, script string) error {
	prog, err := ensure()
	if err != nil {
		return err
	}
	c, err := newCluster(port)
	if err != nil {
		return err
	}
	defer c.Close()
	return runClientScript(dir, len(codecs)*6, prog, script, addr(port))
}

// runScriptedTLS is runScripted against a TLS listener, the script told
// so by a second argument "tls" and the key log file's path by the
// environment (SSLKEYLOGFILE: Python's ssl module writes it; the KafkaJS
// script writes its sockets' keylog events there).
func runScriptedTLS(port int, ensure func() (string, error), dir, script string) error {
	prog, err := ensure()
	if err != nil {
		return err
	}
	c, err := tlsCluster(port, &tls.Config{MinVersion: tls.VersionTLS12}, "capgen-tls-scripted")
	if err != nil {
		return err
	}
	defer c.Close()
	abs, err := filepath.Abs(keylogFile)
	if err != nil {
		return err
	}
	os.Setenv("SSLKEYLOGFILE", abs)
	defer os.Unsetenv("SSLKEYLOGFILE")
	return runClientScript(dir, len(codecs)*6, prog, script, addr(port), "tls")
}

// runKafkaPythonTLS: kafka-python with security_protocol SSL.
func runKafkaPythonTLS(ports []int) error {
	return runScriptedTLS(ports[0], ensurePython, ".", "kafkapython.py")
}

// runKafkaJSTLS: KafkaJS with ssl.
func runKafkaJSTLS(ports []int) error {
	return runScriptedTLS(ports[0], ensureKafkaJS, "js", "kafkajs.js")
}

// runClientScript runs prog args in dir and checks that the last line of
// its output is the number of records it consumed, want.
func runClientScript(dir string, want int, prog string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", prog, strings.Join(args, " "), err, tail(stderr.String(), 40))
	}
	if verbose && stderr.Len() > 0 {
		log.Printf("%s stderr:\n%s", args[0], tail(stderr.String(), 40))
	}
	lines := strings.Fields(stdout.String())
	if len(lines) == 0 {
		return fmt.Errorf("%s printed nothing", args[0])
	}
	got, err := strconv.Atoi(lines[len(lines)-1])
	if err != nil || got != want {
		return fmt.Errorf("%s consumed %q records, want %d", args[0], lines[len(lines)-1], want)
	}
	return nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ensurePython returns a Python 3 that imports kafka and its codec modules,
// installing kafkapythonPackages with apt-get when they are missing. Debian's
// /usr/bin/python3 comes first: the packages install there, not into another
// Python on PATH.
func ensurePython() (string, error) {
	const probe = "import kafka, snappy, lz4.frame, zstandard; assert kafka.__version__ == '2.0.2', kafka.__version__"
	candidates := []string{"/usr/bin/python3", "python3"}
	works := func() string {
		for _, p := range candidates {
			if exec.Command(p, "-c", probe).Run() == nil {
				return p
			}
		}
		return ""
	}
	if p := works(); p != "" {
		return p, nil
	}
	if err := aptInstall(kafkapythonPackages...); err != nil {
		return "", err
	}
	if p := works(); p != "" {
		return p, nil
	}
	out, _ := exec.Command(candidates[0], "-c", probe).CombinedOutput()
	return "", fmt.Errorf("no python3 with kafka-python 2.0.2 and its codecs (%s): %s",
		strings.Join(kafkapythonPackages, " "), out)
}

// ensureKafkaJS returns node, after installing nodejs and npm with apt-get
// when they are missing and js/node_modules from js/package-lock.json with
// npm ci when KafkaJS is not there yet.
func ensureKafkaJS() (string, error) {
	node, err := ensureTool("node", "nodejs")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join("js", "kafkajs.js")); err != nil {
		return "", fmt.Errorf("js/kafkajs.js not found: run capgen from tools/capgen (%w)", err)
	}
	if _, err := os.Stat(filepath.Join("js", "node_modules", "kafkajs", "package.json")); err == nil {
		return node, nil
	}
	npm, err := ensureTool("npm", "npm")
	if err != nil {
		return "", err
	}
	log.Printf("npm ci in js/")
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = "js"
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %w: %s", err, out)
	}
	return node, nil
}

// aptInstall installs Debian packages (as root), once per run after one
// apt-get update.
func aptInstall(pkgs ...string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("install the Debian packages %s", strings.Join(pkgs, " "))
	}
	var updErr error
	aptUpdate.Do(func() {
		log.Printf("apt-get update")
		updErr = run("apt-get", "update", "-qq")
	})
	if updErr != nil {
		return updErr
	}
	log.Printf("apt-get install %s", strings.Join(pkgs, " "))
	return run("apt-get", append([]string{"install", "-y", "-qq"}, pkgs...)...)
}
