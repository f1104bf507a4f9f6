package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/sweep/slurmexec"
)

func TestSlurmOptionsFlagsOverrideTheExperiment(t *testing.T) {
	four := 4
	e := &experiment.Experiment{Name: "x", Slurm: experiment.SlurmConfig{Partition: "cpu", Account: "lab", Time: "01:00:00",
		MaxParallel: &four, Extra: "--qos=long", CPUs: 2, MemMB: 4096}}
	g := &globalOptions{db: "r.db", workdir: "w", config: configList{paths: []string{"experiments.toml"}}, stdout: io.Discard, stderr: io.Discard}
	saved := slurmFlags
	defer func() { slurmFlags = saved }()

	slurmFlags.maxParallel = -1
	o, err := slurmOptions(g, e, false)
	if err != nil {
		t.Fatal(err)
	}
	if o.Partition != "cpu" || o.Account != "lab" || o.Time != "01:00:00" || o.MaxParallel != 4 || o.CPUs != 2 || o.MemMB != 4096 ||
		!reflect.DeepEqual(o.Extra, []string{"--qos=long"}) {
		t.Errorf("from the experiment: %+v", o)
	}
	// Neither the table nor the flag: the default throttle; the table's
	// 0 lifts it.
	none := &experiment.Experiment{Name: "y"}
	if o, err := slurmOptions(g, none, false); err != nil || o.MaxParallel != slurmexec.DefaultMaxParallel || o.MaxParallel == 0 {
		t.Errorf("no table, no flag: max parallel %d, %v; want the default %d", o.MaxParallel, err, slurmexec.DefaultMaxParallel)
	}
	zero := 0
	none.Slurm.MaxParallel = &zero
	if o, err := slurmOptions(g, none, false); err != nil || o.MaxParallel != 0 {
		t.Errorf("max_parallel = 0: %d, %v; want no limit", o.MaxParallel, err)
	}
	slurmFlags.partition, slurmFlags.time, slurmFlags.maxParallel, slurmFlags.extra = "gpu", "2-00:00:00", 0, "--requeue --comment='a b'"
	o, err = slurmOptions(g, e, true)
	if err != nil {
		t.Fatal(err)
	}
	if o.Partition != "gpu" || o.Account != "lab" || o.Time != "2-00:00:00" || o.MaxParallel != 0 || !o.RetryFailed ||
		!reflect.DeepEqual(o.Extra, []string{"--qos=long", "--requeue", "--comment=a b"}) {
		t.Errorf("flags over the experiment: %+v", o)
	}
	slurmFlags.extra = "'open"
	if _, err := slurmOptions(g, e, false); err == nil || !strings.Contains(err.Error(), "--slurm-extra") {
		t.Errorf("bad --slurm-extra: %v", err)
	}
	slurmFlags.extra, slurmFlags.cpus, slurmFlags.mem = "", 4, "8G"
	if o, err = slurmOptions(g, e, false); err != nil || o.CPUs != 4 || o.MemMB != 8192 {
		t.Errorf("--slurm-cpus 4 --slurm-mem 8G: %+v, %v", o, err)
	}
	slurmFlags.mem = "lots"
	if _, err := slurmOptions(g, e, false); err == nil || !strings.Contains(err.Error(), "--slurm-mem") {
		t.Errorf("bad --slurm-mem: %v", err)
	}
	slurmFlags.cpus, slurmFlags.mem = 0, ""
	slurmFlags.extra, slurmFlags.time = "", "2h"
	if _, err := slurmOptions(g, e, false); err == nil || !strings.Contains(err.Error(), "--slurm-time") {
		t.Errorf("bad --slurm-time: %v", err)
	}
}
