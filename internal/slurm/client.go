package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Client runs Slurm's commands. The zero value finds sbatch, squeue and
// scancel on PATH and retries transient failures 4 times, waiting 2 s, 4 s,
// 8 s and 16 s.
type Client struct {
	Sbatch   string // command or path; default "sbatch"
	Squeue   string // default "squeue"
	Scancel  string // default "scancel"
	Sacct    string // default "sacct"
	Scontrol string // default "scontrol"
	Sacctmgr string // default "sacctmgr"
	// Retries is how many times a transiently failing command is run
	// again; 0 means 4, negative means never.
	Retries int
	// Backoff is the first wait before a retry, doubled each time; 0 means 2 s.
	Backoff time.Duration
	// Sleep waits d or until ctx ends; nil means a real timer (tests
	// replace it).
	Sleep func(ctx context.Context, d time.Duration) error
}

// ErrNotFound is returned (wrapped) when a Slurm command is not installed.
var ErrNotFound = errors.New("slurm command not found")

// Available reports whether sbatch can be found, and if not, why.
func (c *Client) Available() error {
	if _, err := exec.LookPath(or(c.Sbatch, "sbatch")); err != nil {
		return fmt.Errorf("%s: %w", or(c.Sbatch, "sbatch"), ErrNotFound)
	}
	return nil
}

// CommandError is a Slurm command that failed: its name, exit status and
// what it printed on stderr (or stdout), as one line.
type CommandError struct {
	Command   string
	Status    int // exit status, -1 when it did not run
	Msg       string
	Transient bool
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s failed (exit status %d): %s", e.Command, e.Status, e.Msg)
}

// transientMarks are messages of failures that go away when retried: the
// controller is restarting, overloaded or briefly out of reach.
var transientMarks = []string{
	"socket timed out",
	"unable to contact slurm controller",
	"resource temporarily unavailable",
	"slurm temporarily unable to accept job",
	"connection refused",
	"connection reset",
	"transport endpoint is not connected",
	"zero bytes were transmitted",
	"communication connection failure",
	"slurmctld not responding",
	"try again",
}

func isTransient(msg string) bool {
	m := strings.ToLower(msg)
	for _, t := range transientMarks {
		if strings.Contains(m, t) {
			return true
		}
	}
	return false
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")), " ")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// exec runs name with args (and stdin), retrying transient failures, and
// returns its stdout.
func (c *Client) exec(ctx context.Context, name string, args []string, stdin string) (string, error) {
	retries := c.Retries
	if retries == 0 {
		retries = 4
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = 2 * time.Second
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	for attempt := 0; ; attempt++ {
		out, err := c.once(ctx, name, args, stdin)
		var ce *CommandError
		if err == nil || !errors.As(err, &ce) || !ce.Transient || attempt >= retries {
			return out, err
		}
		if serr := sleep(ctx, wait); serr != nil {
			return "", fmt.Errorf("%w (gave up: %v)", err, serr)
		}
		wait *= 2
	}
}

func (c *Client) once(ctx context.Context, name string, args []string, stdin string) (string, error) {
	if _, err := exec.LookPath(name); err != nil {
		return "", fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	status := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	}
	msg := oneLine(stderr.String())
	if msg == "" {
		msg = oneLine(stdout.String())
	}
	if msg == "" {
		msg = err.Error()
	}
	return "", &CommandError{Command: name, Status: status, Msg: msg, Transient: isTransient(msg)}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
