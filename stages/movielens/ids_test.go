package movielens

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/trialio"

	"github.com/parquet-go/parquet-go"
)

// TestBinnedOriginalIDs: every binned row carries the original MovieLens
// ids beside its dense indices, and they agree with the id maps.
func TestBinnedOriginalIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := smallBinary(t, dir, 200)
	dst := filepath.Join(dir, "binned.parquet")
	if _, err := Bin(ctx, src, dst, 4); err != nil {
		t.Fatal(err)
	}
	up, ip := IDMapPaths(dst)
	uids, err := ratings.ReadIDMap(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	iids, err := ratings.ReadIDMap(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ratings.ReadAll[ratings.Binned](ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ratings.ReadAll[ratings.Binary](ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(in) || len(rows) == 0 {
		t.Fatalf("%d binned rows from %d", len(rows), len(in))
	}
	for k, r := range rows {
		if r.UserID != uids[r.User] || r.ItemID != iids[r.Item] || r.UserID != in[k].User || r.ItemID != in[k].Item {
			t.Fatalf("row %d: user %d (id %d), item %d (id %d); maps say %d, %d; input %d, %d",
				k, r.User, r.UserID, r.Item, r.ItemID, uids[r.User], iids[r.Item], in[k].User, in[k].Item)
		}
	}
}

// TestTimestampColumn: the timestamp column of every table is a Parquet
// TIMESTAMP (milliseconds, UTC) holding the unix seconds times 1000, and
// reads back as unix seconds.
func TestTimestampColumn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := smallBinary(t, dir, 50)
	dst := filepath.Join(dir, "binned.parquet")
	if _, err := Bin(ctx, src, dst, 3); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{src, dst} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		leaf, ok := pf.Schema().Lookup("timestamp")
		if !ok {
			t.Fatalf("%s: no timestamp column", path)
		}
		lt := leaf.Node.Type().LogicalType()
		if got := fmt.Sprint(lt); !strings.Contains(got, "TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)") {
			t.Errorf("%s: timestamp column has logical type %v, want TIMESTAMP(MILLIS, UTC)", path, lt)
		}
		f.Close()
	}
	rows, err := ratings.ReadAll[ratings.Binned](ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.TimeMS != r.Timestamp*1000 || r.Timestamp < 1000 || r.Timestamp > 2000 {
			t.Fatalf("row %+v: want unix seconds in [1000, 2000] and TimeMS = 1000 Timestamp", r)
		}
	}
	if _, err := ratings.ParseLine(ratings.FormatCSV, []byte("1,2,3.5,9223372036854776")); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("timestamp beyond int64 milliseconds: err %v", err)
	}
}

// TestPlantedVectorsNpy: GenerateFile writes the planted vectors as a .npy
// file of shape (Bins, Users+Items, D) that trialio.ReadNpy reads, and
// ReadPlanted refuses a file made with other settings.
func TestPlantedVectorsNpy(t *testing.T) {
	dir := t.TempDir()
	cfg := smallPlanted()
	vec := filepath.Join(dir, "vectors.npy")
	if _, err := GenerateFile(context.Background(), filepath.Join(dir, "r.csv"), vec, cfg); err != nil {
		t.Fatal(err)
	}
	x, shape, err := trialio.ReadNpy(vec)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) != 3 || shape[0] != cfg.Bins || shape[1] != cfg.Users+cfg.Items || shape[2] != cfg.D {
		t.Fatalf("shape %v", shape)
	}
	f, err := os.Open(vec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, v := make([]float64, cfg.Users*cfg.D), make([]float64, cfg.Items*cfg.D)
	last := cfg.Bins - 1
	if err := ReadPlanted(f, cfg, last, u, v); err != nil {
		t.Fatal(err)
	}
	n := (cfg.Users + cfg.Items) * cfg.D
	if u[0] != x[last*n] || v[len(v)-1] != x[len(x)-1] {
		t.Errorf("ReadPlanted and ReadNpy disagree")
	}
	other := cfg
	other.Bins++
	if err := ReadPlanted(f, other, 0, u, v); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("other settings: err %v", err)
	}
}
