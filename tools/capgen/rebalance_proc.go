package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Group members that are processes of their own: kafka-python
// (kafkapython_member.py), KafkaJS (js/member.js) and librdkafka (kcat -G).
// The scripts print one JSON object a line for each assignment their
// library reports:
//
//	{"event":"assigned","memberId":"…","generation":3,"assigned":{"capgen-rebalance":[0,1]}}
//
// ("generation" is -1 where the library does not say) and leave the group
// when they read "leave" on standard input. kcat prints its own
// "% Group G rebalanced (memberid M): assigned: T [0], T [1]" lines on
// standard error and leaves on SIGTERM. A kill is SIGKILL: the kernel
// closes the sockets and no LeaveGroup is sent.

// procMember is a member process.
type procMember struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// leaveSignal: leave with this signal rather than a line on stdin.
	leaveSignal syscall.Signal
	done        chan error
	stderr      *strings.Builder
}

// procEvent is one JSON line of a member script.
type procEvent struct {
	Event      string             `json:"event"`
	MemberID   string             `json:"memberId"`
	Generation int32              `json:"generation"`
	Assigned   map[string][]int32 `json:"assigned"`
}

func startProcMember(m *memberBase, dir string, parse func(m *memberBase, line string), fromStderr bool, prog string, args ...string) (*procMember, error) {
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	pm := &procMember{cmd: cmd, stdin: stdin, done: make(chan error, 1), stderr: new(strings.Builder)}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	events, other := out, errPipe
	if fromStderr {
		events, other = errPipe, out
	}
	readDone := make(chan struct{}, 2)
	go func() {
		sc := bufio.NewScanner(events)
		for sc.Scan() {
			if fromStderr {
				pm.stderr.WriteString(sc.Text() + "\n")
			}
			parse(m, sc.Text())
		}
		readDone <- struct{}{}
	}()
	go func() {
		sc := bufio.NewScanner(other)
		for sc.Scan() {
			if !fromStderr {
				pm.stderr.WriteString(sc.Text() + "\n")
			}
		}
		readDone <- struct{}{}
	}()
	go func() {
		<-readDone
		<-readDone
		err := cmd.Wait()
		if err != nil && verbose {
			m.x.logf(m.clientID, "exited: %v: %s", err, tail(pm.stderr.String(), 10))
		}
		pm.done <- err
	}()
	return pm, nil
}

// parseJSONEvent reads a member script's line.
func parseJSONEvent(m *memberBase, line string) {
	var ev procEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Event == "" {
		m.x.logf(m.clientID, "%s", line)
		return
	}
	if ev.Event == "closed" {
		m.x.logf(m.clientID, "closed")
		return
	}
	m.record(memberEvent{kind: ev.Event, memberID: ev.MemberID, generation: ev.Generation, assigned: ev.Assigned})
}

func (pm *procMember) leave() error {
	if pm.leaveSignal != 0 {
		pm.cmd.Process.Signal(pm.leaveSignal)
	} else if _, err := io.WriteString(pm.stdin, "leave\n"); err != nil {
		return err
	}
	select {
	case err := <-pm.done:
		if err != nil {
			return fmt.Errorf("%w: %s", err, tail(pm.stderr.String(), 20))
		}
		return nil
	case <-time.After(20 * time.Second):
		pm.cmd.Process.Kill()
		return fmt.Errorf("member did not exit after leaving: %s", tail(pm.stderr.String(), 20))
	}
}

func (pm *procMember) kill() error {
	pm.cmd.Process.Kill()
	select {
	case <-pm.done:
	case <-time.After(10 * time.Second):
	}
	return nil
}

func startKafkaPythonMember(rr *rebalanceRun, m *memberBase) (groupMember, error) {
	py, err := ensurePython()
	if err != nil {
		return nil, err
	}
	return startProcMember(m, ".", parseJSONEvent, false, py, "kafkapython_member.py", addr(rr.port), rr.group,
		rebalanceTopic, m.clientID, strconv.Itoa(int(rebalanceSession.Milliseconds())), strconv.Itoa(int(rebalanceHeartbeat.Milliseconds())))
}

func startKafkaJSMember(rr *rebalanceRun, m *memberBase) (groupMember, error) {
	node, err := ensureKafkaJS()
	if err != nil {
		return nil, err
	}
	return startProcMember(m, "js", parseJSONEvent, false, node, "member.js", addr(rr.port), rr.group,
		rebalanceTopic, m.clientID, strconv.Itoa(int(rebalanceSession.Milliseconds())), strconv.Itoa(int(rebalanceHeartbeat.Milliseconds())))
}

// kcatRebalanceRE matches kcat's report of a rebalance.
var kcatRebalanceRE = regexp.MustCompile(`^% Group (\S+) rebalanced \(memberid (\S+)\): (assigned|revoked): ?(.*)$`)

// kcatPartitionRE matches one "topic [partition]" of its list.
var kcatPartitionRE = regexp.MustCompile(`(\S+) \[(\d+)\]`)

func parseKcatLine(m *memberBase, line string) {
	mm := kcatRebalanceRE.FindStringSubmatch(line)
	if mm == nil {
		if strings.HasPrefix(line, "%") {
			m.x.logf(m.clientID, "%s", line)
		}
		return
	}
	a := map[string][]int32{}
	for _, p := range kcatPartitionRE.FindAllStringSubmatch(mm[4], -1) {
		n, _ := strconv.Atoi(p[2])
		a[p[1]] = append(a[p[1]], int32(n))
	}
	m.x.logf(m.clientID, "%s", line)
	m.record(memberEvent{kind: mm[3], memberID: mm[2], generation: -1, assigned: a})
}

func startKcatMember(rr *rebalanceRun, m *memberBase) (groupMember, error) {
	args := []string{"-b", addr(rr.port), "-X", "client.id=" + m.clientID, "-X", "broker.address.family=v4",
		"-G", rr.group, "-X", "auto.offset.reset=earliest",
		"-X", fmt.Sprintf("session.timeout.ms=%d", rebalanceSession.Milliseconds()),
		"-X", fmt.Sprintf("heartbeat.interval.ms=%d", rebalanceHeartbeat.Milliseconds()),
		"-X", "partition.assignment.strategy=range", "-X", "fetch.wait.max.ms=500",
		"-f", "%t [%p] at offset %o\n"}
	if m.instanceID != nil {
		args = append(args, "-X", "group.instance.id="+*m.instanceID)
	}
	args = append(args, rebalanceTopic)
	pm, err := startProcMember(m, ".", parseKcatLine, true, "kcat", args...)
	if err != nil {
		return nil, err
	}
	pm.leaveSignal = syscall.SIGTERM
	return pm, nil
}
