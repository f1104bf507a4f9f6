package movielens

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"goldstone/formats/ratings"
)

// TestPlantedTruthContext: the planted vectors are read under the stage's
// context, so a cancelled stage stops there instead of reading on (it read
// under context.Background before).
func TestPlantedTruthContext(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"binned.users.parquet", "binned.items.parquet"} {
		if err := ratings.WriteIDMap(context.Background(), filepath.Join(dir, name), []int32{7, 9}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := PlantedConfig{D: 2, Bins: 1, Users: 2, Items: 2}
	_, err := plantedTruth(ctx, filepath.Join(dir, "no-vectors"), dir, cfg, 1, 2, 2, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: err %v, want context.Canceled", err)
	}
}
