package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Job is what to submit with sbatch. Zero fields are left to the cluster's
// defaults.
type Job struct {
	Name        string // --job-name
	Array       string // --array, e.g. ArraySpec(indices, k)
	Partition   string // --partition
	Account     string // --account
	Time        string // --time, e.g. "02:00:00"
	CPUsPerTask int    // --cpus-per-task
	MemMB       int    // --mem, in MiB
	Output      string // --output path (%A job id, %a array index, %j job id)
	OpenMode    string // --open-mode: "append" keeps a requeued task's earlier output
	Dependency  string // --dependency, e.g. "afterany:1234"
	// KillOnInvalidDep cancels the job when its dependency can never be
	// satisfied (--kill-on-invalid-dep=yes): an afterok job whose
	// dependency failed.
	KillOnInvalidDep bool
	Signal           string // --signal, e.g. "B:TERM@120"
	Chdir            string // --chdir
	// Extra are further sbatch arguments given verbatim before the script
	// (--qos=..., --requeue, --constraint=...); see SplitArgs.
	Extra []string
	// Script is the batch script, given to sbatch on stdin; it must start
	// with "#!".
	Script string
}

// Args returns the sbatch command-line arguments for j (the script goes on
// stdin).
func (j *Job) Args() []string {
	args := []string{"--parsable"}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag+"="+v)
		}
	}
	add("--job-name", j.Name)
	add("--array", j.Array)
	add("--partition", j.Partition)
	add("--account", j.Account)
	add("--time", j.Time)
	if j.CPUsPerTask > 0 {
		add("--cpus-per-task", strconv.Itoa(j.CPUsPerTask))
	}
	if j.MemMB > 0 {
		add("--mem", strconv.Itoa(j.MemMB)+"M")
	}
	add("--output", j.Output)
	add("--open-mode", j.OpenMode)
	add("--dependency", j.Dependency)
	if j.KillOnInvalidDep {
		add("--kill-on-invalid-dep", "yes")
	}
	add("--signal", j.Signal)
	add("--chdir", j.Chdir)
	return append(args, j.Extra...)
}

// ScriptText is the batch script with j's sbatch arguments as #SBATCH
// lines after its first line: a copy that 'sbatch FILE' would submit the
// same way.
func (j *Job) ScriptText() string {
	first, rest, _ := strings.Cut(j.Script, "\n")
	var b strings.Builder
	b.WriteString(first + "\n")
	for _, a := range j.Args() {
		if a == "--parsable" {
			continue
		}
		b.WriteString("#SBATCH " + a + "\n")
	}
	b.WriteString(rest)
	return b.String()
}

// Submit submits j and returns its job id. With --parsable sbatch prints
// "jobid" or "jobid;cluster"; anything else is an error.
func (c *Client) Submit(ctx context.Context, j *Job) (string, error) {
	if !strings.HasPrefix(j.Script, "#!") {
		return "", fmt.Errorf("sbatch: the batch script must start with #! (got %.20q)", j.Script)
	}
	out, err := c.exec(ctx, or(c.Sbatch, "sbatch"), j.Args(), j.Script)
	if err != nil {
		return "", err
	}
	return parseJobID(out)
}

// TestSubmit asks sbatch whether it would accept j, without submitting it
// (sbatch --test-only): nil when it would, sbatch's refusal as the error
// when not.
func (c *Client) TestSubmit(ctx context.Context, j *Job) error {
	if !strings.HasPrefix(j.Script, "#!") {
		return fmt.Errorf("sbatch: the batch script must start with #! (got %.20q)", j.Script)
	}
	args := j.Args()
	args[0] = "--test-only" // for --parsable
	_, err := c.exec(ctx, or(c.Sbatch, "sbatch"), args, j.Script)
	return err
}

func parseJobID(out string) (string, error) {
	line := strings.TrimSpace(out)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[i+1:]) // warnings may come first
	}
	id, _, _ := strings.Cut(line, ";")
	if n, err := strconv.ParseUint(id, 10, 64); err != nil || n == 0 {
		return "", fmt.Errorf("sbatch: unexpected output %q (want a job id)", oneLine(out))
	}
	return id, nil
}

// Cancel cancels a job, or one task of an array job when index >= 0.
func (c *Client) Cancel(ctx context.Context, jobID string, index int) error {
	target := jobID
	if index >= 0 {
		target = fmt.Sprintf("%s_%d", jobID, index)
	}
	_, err := c.exec(ctx, or(c.Scancel, "scancel"), []string{target}, "")
	return err
}

// SplitArgs splits a --slurm-extra value into arguments as a POSIX shell
// would for words: blanks separate them, single quotes keep everything,
// double quotes keep all but \" and \\, a backslash outside quotes escapes
// the next character. No expansion of any kind.
func SplitArgs(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\'):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("slurm extra arguments %q: trailing backslash", s)
			}
			i++
			cur.WriteRune(rs[i])
			inArg = true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("slurm extra arguments %q: unterminated %c quote", s, quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}
