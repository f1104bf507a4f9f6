package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"goldstone/internal/atomicfile"
)

// V2ShardURL is the official URL of shard (e.g. "a", "ab", "_NOUN_", "other") of the
// English n-gram files of version 20120701, for n = 1..5.
func V2ShardURL(n int, shard string) string {
	return fmt.Sprintf("http://storage.googleapis.com/books/ngrams/books/googlebooks-eng-all-%dgram-20120701-%s.gz", n, shard)
}

// V2TotalsURL is the official URL of the English totals file of version 20120701.
const V2TotalsURL = "http://storage.googleapis.com/books/ngrams/books/googlebooks-eng-all-totalcounts-20120701.txt"

// V3ShardURL is the official URL of shard index (0-based) of count shards of the English
// n-gram files of version 20200217, e.g. V3ShardURL(5, 12, 19423) ends in
// "/20200217/eng/5-00012-of-19423.gz".
func V3ShardURL(n, index, count int) string {
	return fmt.Sprintf("https://storage.googleapis.com/books/ngrams/books/20200217/eng/%d-%05d-of-%05d.gz", n, index, count)
}

// ErrChecksum reports a download whose SHA-256 differs from the one asked for.
var ErrChecksum = errors.New("checksum mismatch")

// Fetch downloads url to dst: into a temporary file in dst's directory that is renamed to dst
// only once complete and, when wantSHA256 (hex) is not "", verified. client nil means
// http.DefaultClient. On error dst is untouched and the temporary file removed.
func Fetch(ctx context.Context, client *http.Client, url, dst, wantSHA256 string) (err error) {
	if client == nil {
		client = http.DefaultClient
	}
	want := strings.ToLower(strings.TrimSpace(wantSHA256))
	if want != "" {
		if b, e := hex.DecodeString(want); e != nil || len(b) != sha256.Size {
			return fmt.Errorf("fetch %s: sha256 %q is not 64 hex digits", url, wantSHA256)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: %s", url, resp.Status)
	}
	tmp, err := atomicfile.Create(dst)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	defer tmp.Abort()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if err != nil {
		return fmt.Errorf("fetch %s: after %d bytes: %w", url, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return fmt.Errorf("fetch %s: got %d of %d bytes", url, n, resp.ContentLength)
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return fmt.Errorf("fetch %s: %w: got sha256 %s, want %s", url, ErrChecksum, got, want)
	}
	if err = tmp.Commit(); err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	return nil
}
