package movielens

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/formats/ratings"
)

func buildZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// serve serves name.zip and name.zip.md5 and counts the zip downloads.
func serve(t *testing.T, name string, zipData []byte, md5Text string) (*httptest.Server, *int) {
	t.Helper()
	hits := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/movielens/" + name + ".zip":
			*hits++
			w.Write(zipData)
		case "/movielens/" + name + ".zip.md5":
			w.Write([]byte(md5Text))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

func TestFetch(t *testing.T) {
	const body = "userId,movieId,rating,timestamp\r\n1,2,3.5,4\r\n"
	good := buildZip(t, map[string]string{
		"ml-latest-small/ratings.csv": body,
		"ml-latest-small/movies.csv":  "movieId,title,genres\r\n",
		"ml-latest-small/README.txt":  "readme",
	})
	sum := fmt.Sprintf("%x", md5.Sum(good))
	evil := buildZip(t, map[string]string{
		"ml-latest-small/ratings.csv": body,
		"../../evil.txt":              "x",
	})
	evilSum := fmt.Sprintf("%x", md5.Sum(evil))
	ctx := context.Background()
	tests := []struct {
		name    string
		zip     []byte
		md5     string
		wantErr error
	}{
		{"bsd md5", good, "MD5 (ml-latest-small.zip) = " + sum + "\n", nil},
		{"gnu md5", good, sum + "  ml-latest-small.zip\n", nil},
		{"tampered", append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1), "MD5 (ml-latest-small.zip) = " + sum, ErrChecksum},
		{"zip slip", evil, evilSum, ErrUnsafeZip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, hits := serve(t, "ml-latest-small", tc.zip, tc.md5)
			dataDir := filepath.Join(t.TempDir(), "data")
			p, err := Fetch(ctx, srv.URL+"/movielens/", "ml-latest-small", dataDir, srv.Client())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				left, _ := filepath.Glob(filepath.Join(dataDir, "*"))
				hidden, _ := filepath.Glob(filepath.Join(dataDir, ".*"))
				if len(left)+len(hidden) != 0 {
					t.Fatalf("left %v %v in the data dir", left, hidden)
				}
				if _, err := os.Stat(filepath.Join(dataDir, "..", "..", "evil.txt")); err == nil {
					t.Fatal("zip slip entry written")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dataDir, "ml-latest-small", "ratings.csv"); p != want || string(readBytes(t, p)) != body {
				t.Fatalf("path %s (want %s), content %q", p, want, readBytes(t, p))
			}
			if entries, _ := os.ReadDir(filepath.Join(dataDir, "ml-latest-small")); len(entries) != 1 {
				t.Fatalf("unpacked %d files, want only ratings.csv", len(entries))
			}
			if got, err := Locate(dataDir, "ml-latest-small"); err != nil || got != p {
				t.Fatalf("Locate = %s, %v", got, err)
			}
			// Present: no second download.
			if _, err := Fetch(ctx, srv.URL+"/movielens", "ml-latest-small", dataDir, srv.Client()); err != nil || *hits != 1 {
				t.Fatalf("second fetch: %v, %d downloads", err, *hits)
			}
		})
	}
	if _, err := Fetch(ctx, "http://127.0.0.1:1", "ml-nope", t.TempDir(), nil); err == nil {
		t.Fatal("unknown release accepted")
	}
}

func TestParseMD5(t *testing.T) {
	const h = "0123456789abcdef0123456789ABCDEF"
	for _, tc := range []struct{ text, want string }{
		{"MD5 (ml-20m.zip) = " + h, strings.ToLower(h)},
		{h + "  ml-20m.zip\n", strings.ToLower(h)},
		{h + " *ml-20m.zip", strings.ToLower(h)},
		{h + "\n", strings.ToLower(h)},
		{"MD5 (other.zip) = " + h, ""},
		{"garbage", ""},
	} {
		got, err := ParseMD5(tc.text, "ml-20m.zip")
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("ParseMD5(%q) = %q, %v; want %q", tc.text, got, err, tc.want)
		}
	}
}

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ml-10M100K"), 0o755); err != nil {
		t.Fatal(err)
	}
	dat := writeFile(t, filepath.Join(dir, "ml-10M100K", "ratings.dat"), []byte("1::2::3::4\n"))
	if err := os.MkdirAll(filepath.Join(dir, "ml-20m"), 0o755); err != nil {
		t.Fatal(err)
	}
	gz := writeFile(t, filepath.Join(dir, "ml-20m", "ratings.csv.gz"), gzipBytes(t, []byte(ratings.CSVHeader+"\n")))
	for _, tc := range []struct{ name, want string }{
		{"ml-10m", dat},
		{"ml-20m", gz},
		{dat, dat},
		{filepath.Join(dir, "ml-10M100K"), dat},
	} {
		if got, err := Locate(dir, tc.name); err != nil || got != tc.want {
			t.Errorf("Locate(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	_, err := Locate(dir, "ml-25m")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), filepath.Join(dir, "ml-25m", "ratings.csv")) || !strings.Contains(err.Error(), OfficialBaseURL+"/ml-25m.zip") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Locate(dir, "no-such"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ml-latest-small") {
		t.Fatalf("err = %v", err)
	}
}
