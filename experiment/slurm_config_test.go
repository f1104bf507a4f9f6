package experiment_test

import (
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	_ "goldstone/stages/pipelines"
)

const slurmTOML = `
[experiments.a]
pipeline = "artificial"
[experiments.a.settings]
steps = 10
[experiments.a.slurm]
partition = "cpu"
account = "lab"
time = "1-02:00:00"
max_parallel = 4
extra = "--qos=long"
cpus = 2
mem_mb = 4096
trials_per_task = 3

[experiments.b]
pipeline = "artificial"
[experiments.b.settings]
steps = 10
`

func TestSlurmTable(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(slurmTOML))
	if err != nil {
		t.Fatal(err)
	}
	four, three := 4, 3
	want := experiment.SlurmConfig{Partition: "cpu", Account: "lab", Time: "1-02:00:00", MaxParallel: &four, Extra: "--qos=long", CPUs: 2, MemMB: 4096, TrialsPerTask: &three}
	if got := c.Experiments["a"].Slurm; !reflect.DeepEqual(got, want) {
		t.Errorf("slurm table %+v, want %+v", got, want)
	}
	if got := c.Experiments["b"].Slurm.MaxParallel; got != nil {
		t.Errorf("no slurm table: max_parallel %d, want none (the runner's default)", *got)
	}
	// Where trials run is not part of the configuration: a and b resolve
	// to the same hash but for their names.
	ja, _ := c.Experiments["a"].Resolved()
	jb, _ := c.Experiments["b"].Resolved()
	if strings.Replace(ja, `"a"`, `"b"`, 1) != jb {
		t.Errorf("the slurm table changed the resolved configuration:\n%s\n%s", ja, jb)
	}
	for _, tc := range []struct{ edit, want string }{
		{`time = "1-02:00:00"`, `time = "2h"`},
		{`max_parallel = 4`, `max_parallel = -1`},
		{`mem_mb = 4096`, `mem_mb = -5`},
		{`cpus = 2`, `cpu = 2`},
		{`trials_per_task = 3`, `trials_per_task = 0`},
		{`trials_per_task = 3`, `trials_per_task = 1.5`},
	} {
		bad := strings.Replace(slurmTOML, tc.edit, tc.want, 1)
		_, err := experiment.ParseConfig("x.toml", []byte(bad))
		if err == nil {
			t.Errorf("%s: no error", tc.want)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "x.toml") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q does not name the file on one line", tc.want, msg)
		}
	}
	_, err = experiment.ParseConfig("x.toml", []byte(strings.Replace(slurmTOML, `time = "1-02:00:00"`, `time = "2h"`, 1)))
	if !strings.Contains(err.Error(), "experiments.a.slurm.time") || !strings.Contains(err.Error(), ":9") {
		t.Errorf("bad time: %v; want the key and line 9", err)
	}
}
