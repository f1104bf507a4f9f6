package movielens

import (
	"context"
	"path/filepath"
	"testing"
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
	uids, err := ReadIDMap(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	iids, err := ReadIDMap(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadAll[Binned](ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadAll[Binary](ctx, src)
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
