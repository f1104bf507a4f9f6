package movielens

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/formats/ratings"
)

func TestBuildPlantedRefusesTableSettings(t *testing.T) {
	c, err := experiment.ParseConfig("t.toml", []byte("[experiments.p]\npipeline = \"movielens\"\n[experiments.p.settings]\ndataset = \"planted\"\nuser_column = \"user\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	_, err = experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `dataset = "planted" generates a ratings.csv`) {
		t.Errorf("planted with user_column: %v", err)
	}
}

// ratings.IDSet and indexer keep every id, negative text codes and ids beyond the bitmaps
// included, in ascending order.
func TestIDSetNegativeCodes(t *testing.T) {
	ids := []int32{-5, -1, -70000000, 3, 0, 100000000, -64, -63, -5, 3, -1 << 31, 1<<31 - 1, 64, -65}
	s := ratings.NewIDSet()
	for _, id := range ids {
		s.Add(id)
	}
	want := []int32{-1 << 31, -70000000, -65, -64, -63, -5, -1, 0, 3, 64, 100000000, 1<<31 - 1}
	got := s.Sorted()
	if !reflect.DeepEqual(got, want) || s.Len() != len(want) {
		t.Fatalf("sorted %v (len %d), want %v", got, s.Len(), want)
	}
	x := newIndexer(got)
	for i, id := range got {
		if x.index(id) != int32(i) {
			t.Errorf("index(%d) = %d, want %d", id, x.index(id), i)
		}
	}
}
