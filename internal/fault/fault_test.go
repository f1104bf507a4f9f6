package fault

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// TestPointKills re-runs this test binary as a child that reaches a point
// three times with GOLDSTONE_FAULT naming its second hit.
func TestPointKills(t *testing.T) {
	if os.Getenv("FAULT_CHILD") == "1" {
		Point("other")
		Point("x")
		os.Stdout.WriteString("after first\n")
		Point("x")
		os.Stdout.WriteString("after second\n")
		os.Exit(0)
	}
	for _, tc := range []struct {
		env    string
		killed bool
		out    string
	}{
		{"x@2", true, "after first\n"},
		{"x", true, ""},
		{"y", false, "after first\nafter second\n"},
		{"", false, "after first\nafter second\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPointKills$")
		cmd.Env = append(os.Environ(), "FAULT_CHILD=1", Env+"="+tc.env)
		out, err := cmd.Output()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if killed != tc.killed || string(out) != tc.out {
			t.Errorf("%s=%q: killed %v (%v), output %q; want killed %v, output %q", Env, tc.env, killed, err, out, tc.killed, tc.out)
		}
	}
}

// TestPointSignals: with "!int" or "!term" a point sends the process that
// signal and goes on.
func TestPointSignals(t *testing.T) {
	if os.Getenv("FAULT_CHILD") == "1" {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		Point("x")
		select {
		case s := <-ch:
			os.Stdout.WriteString("got " + s.String() + "\n")
		default:
			os.Stdout.WriteString("no signal\n")
		}
		os.Exit(0)
	}
	for _, tc := range []struct{ env, out string }{
		{"x!int", "got interrupt\n"},
		{"x!term", "got terminated\n"},
		{"x@2!int", "no signal\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPointSignals$")
		cmd.Env = append(os.Environ(), "FAULT_CHILD=1", Env+"="+tc.env)
		out, err := cmd.Output()
		if err != nil || string(out) != tc.out {
			t.Errorf("%s=%q: %v, output %q; want %q", Env, tc.env, err, out, tc.out)
		}
	}
}
