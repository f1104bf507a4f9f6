package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShardURLs(t *testing.T) {
	if got, want := V2ShardURL(5, "ab"), "http://storage.googleapis.com/books/ngrams/books/googlebooks-eng-all-5gram-20120701-ab.gz"; got != want {
		t.Errorf("V2ShardURL = %s, want %s", got, want)
	}
	if got, want := V3ShardURL(5, 12, 19423), "https://storage.googleapis.com/books/ngrams/books/20200217/eng/5-00012-of-19423.gz"; got != want {
		t.Errorf("V3ShardURL = %s, want %s", got, want)
	}
}

func TestFetch(t *testing.T) {
	body := "the cat\t1999\t12\t3\n"
	sum := sha256.Sum256([]byte(body))
	good := hex.EncodeToString(sum[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/shard.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	ctx := context.Background()
	tests := []struct {
		name, path, sha string
		wantErr         string
	}{
		{"ok with checksum", "/shard.gz", strings.ToUpper(good), ""},
		{"ok without checksum", "/shard.gz", "", ""},
		{"checksum mismatch", "/shard.gz", strings.Repeat("0", 64), "checksum mismatch"},
		{"bad checksum", "/shard.gz", "xyz", "not 64 hex digits"},
		{"not found", "/missing.gz", "", "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "shard.gz")
			err := Fetch(ctx, srv.Client(), srv.URL+tc.path, dst, tc.sha)
			ents, _ := os.ReadDir(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if tc.wantErr == "checksum mismatch" && !errors.Is(err, ErrChecksum) {
					t.Errorf("err %v does not wrap ErrChecksum", err)
				}
				if len(ents) != 0 {
					t.Errorf("left files %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(dst)
			if err != nil || string(b) != body || len(ents) != 1 {
				t.Errorf("dst %q (%v), %d files", b, err, len(ents))
			}
		})
	}
}
