package batch

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestPackLayout: trials in the order given, chunked by K, the last task
// holding the rest: ceil(n/K) tasks; K = 1 (or less) is one trial per task.
func TestPackLayout(t *testing.T) {
	for _, tc := range []struct {
		todo []int
		k    int
		want [][]int
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6}, 3, [][]int{{0, 1, 2}, {3, 4, 5}, {6}}},
		{[]int{0, 1, 2, 3, 4, 5}, 3, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{[]int{1, 4, 5, 9}, 2, [][]int{{1, 4}, {5, 9}}}, // a retry: only the trials left, repacked
		{[]int{2, 3}, 5, [][]int{{2, 3}}},
		{[]int{0, 1, 2}, 1, [][]int{{0}, {1}, {2}}},
		{[]int{0, 1}, 0, [][]int{{0}, {1}}},
		{nil, 3, nil},
	} {
		got := Pack(tc.todo, tc.k)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Pack(%v, %d) = %v, want %v", tc.todo, tc.k, got, tc.want)
		}
		if n, k := len(tc.todo), max(1, tc.k); len(got) != (n+k-1)/k {
			t.Errorf("Pack(%v, %d): %d tasks, want ceil(%d/%d)", tc.todo, tc.k, len(got), n, k)
		}
	}
	// The tasks do not share the caller's slice.
	todo := []int{0, 1, 2, 3}
	p := Pack(todo, 2)
	p[0][0] = 9
	if todo[0] != 0 {
		t.Error("Pack's tasks alias its input")
	}
}

// TestPacksFile: a pack file is written atomically beside the manifest,
// read back as written, checked against the manifest (a trial out of range
// or in two tasks, a task over K trials, another run's file), and absent
// for an unpacked submission (nil: task t runs trial t).
func TestPacksFile(t *testing.T) {
	d := RunDir(t.TempDir(), "small", 3)
	m := testManifest(3, 7)
	if err := WriteManifest(d, m); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPacks(d, m, 1)
	if err != nil || p != nil {
		t.Fatalf("no pack file: %v, %v", p, err)
	}
	if got := p.Trials(4); !reflect.DeepEqual(got, []int{4}) {
		t.Errorf("unpacked task 4 runs %v", got)
	}
	want := &Packs{Attempt: 2, PerTask: 3, Tasks: Pack([]int{0, 1, 2, 3, 4, 5, 6}, 3)}
	if err := WritePacks(d, m, want); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.PacksPath(2)); err != nil || !strings.HasSuffix(d.PacksPath(2), "run-3/packs.2.json") {
		t.Fatalf("pack file %s: %v", d.PacksPath(2), err)
	}
	got, err := ReadPacks(d, m, 2)
	if err != nil || !reflect.DeepEqual(got, want) || got.RunID != 3 || got.Format != PacksFormat {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if tr := got.Trials(2); !reflect.DeepEqual(tr, []int{6}) || got.Trials(3) != nil || got.Trials(-1) != nil {
		t.Errorf("task 2 runs %v, task 3 %v", tr, got.Trials(3))
	}
	for _, bad := range []*Packs{
		{Attempt: 3, PerTask: 2, Tasks: [][]int{{0, 1}, {1, 2}}},
		{Attempt: 3, PerTask: 2, Tasks: [][]int{{0, 7}}},
		{Attempt: 3, PerTask: 2, Tasks: [][]int{{0, 1, 2}}},
		{Attempt: 3, PerTask: 2, Tasks: [][]int{{0}, {}}},
		{Attempt: 0, PerTask: 2, Tasks: [][]int{{0}}},
		{Attempt: 3, PerTask: 2},
	} {
		if err := WritePacks(d, m, bad); err == nil || !strings.Contains(err.Error(), "packs.") {
			t.Errorf("WritePacks(%+v): %v", bad, err)
		}
	}
	if _, err := os.Stat(d.PacksPath(3)); !os.IsNotExist(err) {
		t.Errorf("a refused pack file was written: %v", err)
	}
	// A file of another submission under this number, or another run's.
	os.WriteFile(d.PacksPath(4), []byte(`{"format":1,"run_id":3,"attempt":2,"trials_per_task":1,"tasks":[[0]]}`), 0o644)
	if _, err := ReadPacks(d, m, 4); err == nil || !strings.Contains(err.Error(), "holds submission 2") {
		t.Errorf("a pack file under another number: %v", err)
	}
	os.WriteFile(d.PacksPath(5), []byte(`{"format":1,"run_id":3,"attempt":5,"trials_per_task":1,"tasks":[[0,1]]}`), 0o644)
	if _, err := ReadPacks(d, m, 5); err == nil || !strings.Contains(err.Error(), "packs.5.json") {
		t.Errorf("a damaged pack file: %v", err)
	}
	if err := RemovePacks(d, 2); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadPacks(d, m, 2); p != nil || err != nil {
		t.Errorf("after RemovePacks: %v, %v", p, err)
	}
	if err := RemovePacks(d, 2); err != nil {
		t.Errorf("removing an absent pack file: %v", err)
	}
}
