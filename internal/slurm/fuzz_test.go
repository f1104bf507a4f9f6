package slurm

import (
	"strings"
	"testing"
)

// The parsers of the Slurm tools' output: whatever the tools print, they
// return a result or an error naming the line, never panic (.ci/fuzz.sh).

func FuzzParseQueue(f *testing.F) {
	f.Add("", "12_[3-5]|PENDING|JobArrayTaskLimit\n12_1|RUNNING|None\n")
	f.Add("12", "12_0|RUNNING|None\n13|PENDING|Resources\n")
	f.Add("", "12|RUNNING\n")
	f.Add("", "12_x|RUNNING|None\n")
	f.Fuzz(func(t *testing.T, jobID, out string) {
		tasks, err := parseQueue(jobID, out)
		if err != nil {
			return
		}
		for _, task := range tasks {
			if task.Index < -1 || strings.Contains(task.State, "|") {
				t.Fatalf("parseQueue accepted %+v", task)
			}
		}
	})
}

func FuzzParseJobID(f *testing.F) {
	for _, s := range []string{"123\n", "sbatch: warning: x\n456;cluster\n", "", "abc", "12;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		id, err := parseJobID(out)
		if err == nil && (id == "" || strings.ContainsAny(id, "\n;")) {
			t.Fatalf("parseJobID(%q) = %q", out, id)
		}
	})
}
