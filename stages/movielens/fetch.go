package movielens

import (
	"archive/zip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrChecksum is wrapped by Fetch's error when the zip does not match its published MD5.
var ErrChecksum = errors.New("checksum mismatch")

// ErrUnsafeZip is wrapped by Fetch's error when a zip entry would escape the target directory.
var ErrUnsafeZip = errors.New("unsafe zip entry")

// Fetch downloads the release name (a key of Releases) from baseURL (OfficialBaseURL when
// empty) as <base>/<name>.zip together with its checksum <base>/<name>.zip.md5, verifies the
// MD5, and unpacks only the ratings file into dataDir in the zip's layout, returning its path
// (the path Locate(dataDir, name) then finds). The zip is refused whole if any entry name is
// absolute or climbs out with "..". The download and the unpacking go through a temporary
// directory inside dataDir; the ratings file appears by one rename. When the ratings file is
// already present, Fetch returns its path without downloading. client nil means
// http.DefaultClient.
func Fetch(ctx context.Context, baseURL, name, dataDir string, client *http.Client) (string, error) {
	rel, ok := Releases[name]
	if !ok {
		return "", fmt.Errorf("fetch %q: unknown release; known: %s", name, strings.Join(ReleaseNames(), ", "))
	}
	if baseURL == "" {
		baseURL = OfficialBaseURL
	}
	if client == nil {
		client = http.DefaultClient
	}
	final := filepath.Join(dataDir, filepath.FromSlash(rel))
	if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() {
		return final, nil
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(dataDir, ".fetch-"+name+"-*")
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)

	zipURL := strings.TrimSuffix(baseURL, "/") + "/" + name + ".zip"
	sumText, err := get(ctx, client, zipURL+".md5", io.Discard, 1<<16)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	want, err := ParseMD5(sumText, name+".zip")
	if err != nil {
		return "", fmt.Errorf("fetch %s: %s.md5: %w", name, zipURL, err)
	}
	zipPath := filepath.Join(tmp, name+".zip")
	zf, err := os.Create(zipPath)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	h := md5.New()
	_, err = get(ctx, client, zipURL, io.MultiWriter(zf, h), 0)
	if cerr := zf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return "", fmt.Errorf("fetch %s: %s: %w: md5 %s, published %s", name, zipURL, ErrChecksum, got, want)
	}
	staged := filepath.Join(tmp, "out", filepath.FromSlash(rel))
	if err := unzipOne(zipPath, rel, staged); err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	if err := os.Rename(staged, final); err != nil {
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	return final, nil
}

// get fetches url; with limit > 0 it returns the body (at most limit bytes), otherwise it
// copies the body to w.
func get(ctx context.Context, client *http.Client, url string, w io.Writer, limit int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if limit > 0 {
		b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
		if err != nil {
			return "", fmt.Errorf("GET %s: %w", url, err)
		}
		return string(b), nil
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	return "", nil
}

var (
	md5BSD  = regexp.MustCompile(`^MD5 \((.+)\) = ([0-9a-fA-F]{32})$`)
	md5GNU  = regexp.MustCompile(`^([0-9a-fA-F]{32})(?:\s+\*?(.+))?$`)
	errNoMD = errors.New("no MD5 digest")
)

// ParseMD5 returns the lower-case hex MD5 for file from a checksum text in BSD form
// ("MD5 (file) = hex"), GNU form ("hex  file" or "hex *file") or a bare digest. Lines naming
// another file are ignored.
func ParseMD5(text, file string) (string, error) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if m := md5BSD.FindStringSubmatch(line); m != nil {
			if path.Base(m[1]) == file {
				return strings.ToLower(m[2]), nil
			}
			continue
		}
		if m := md5GNU.FindStringSubmatch(line); m != nil {
			if m[2] == "" || path.Base(strings.TrimSpace(m[2])) == file {
				return strings.ToLower(m[1]), nil
			}
		}
	}
	return "", fmt.Errorf("%w for %s", errNoMD, file)
}

// unzipOne checks every entry name of the zip, then extracts the entry named rel into dst.
func unzipOne(zipPath, rel, dst string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("open zip: %w", err)
	}
	defer zr.Close()
	var entry *zip.File
	for _, f := range zr.File {
		if !safeEntry(f.Name) {
			return fmt.Errorf("%w: %q", ErrUnsafeZip, f.Name)
		}
		if path.Clean(f.Name) == rel && !f.FileInfo().IsDir() {
			entry = f
		}
	}
	if entry == nil {
		return fmt.Errorf("zip has no %s", rel)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	rc, err := entry.Open()
	if err != nil {
		return fmt.Errorf("zip %s: %w", rel, err)
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return fmt.Errorf("zip %s: %w", rel, err)
	}
	return out.Close()
}

// safeEntry reports whether a zip entry name stays inside the extraction directory.
func safeEntry(name string) bool {
	if name == "" || strings.Contains(name, `\`) || path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return false
	}
	c := path.Clean(name)
	return c != ".." && !strings.HasPrefix(c, "../")
}
