package movielens

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OfficialBaseURL is where GroupLens publishes the MovieLens zips (<base>/<name>.zip) and
// their checksums (<base>/<name>.zip.md5).
const OfficialBaseURL = "https://files.grouplens.org/datasets/movielens"

// Releases maps each known release name to the path of its ratings file inside the official
// zip, which is also its path under a data directory after Fetch.
var Releases = map[string]string{
	"ml-100k":         "ml-100k/u.data",
	"ml-1m":           "ml-1m/ratings.dat",
	"ml-10m":          "ml-10M100K/ratings.dat",
	"ml-20m":          "ml-20m/ratings.csv",
	"ml-25m":          "ml-25m/ratings.csv",
	"ml-32m":          "ml-32m/ratings.csv",
	"ml-latest":       "ml-latest/ratings.csv",
	"ml-latest-small": "ml-latest-small/ratings.csv",
}

// ReleaseNames returns the known release names, sorted.
func ReleaseNames() []string {
	names := make([]string, 0, len(Releases))
	for n := range Releases {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ErrNotFound is wrapped by Locate's error when no ratings file was found.
var ErrNotFound = errors.New("ratings file not found")

// ratingsFiles are the names tried inside a directory given explicitly, each also with
// the suffixes of compressedSuffixes.
var ratingsFiles = []string{"ratings.csv", "ratings.dat", "u.data", "ratings.parquet"}

// compressedSuffixes are tried after a ratings file's name: plain, gzip, zstd.
var compressedSuffixes = []string{"", ".gz", ".zst"}

// Locate returns the path of a ratings file. name is either a known release name
// (see Releases), looked up under dataDir in the official zip layout (plain, or with a ".gz"
// or ".zst" suffix), or an explicit path to a ratings file or to a directory holding
// ratings.csv, ratings.dat, u.data or ratings.parquet (each also with those suffixes); a relative path is taken from the working directory, else from
// dataDir. The error lists every place it looked and how to fetch the release
// or point at a local copy.
func Locate(dataDir, name string) (string, error) {
	var tried []string
	try := func(p string) bool {
		tried = append(tried, p)
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	if rel, ok := Releases[name]; ok {
		for _, sfx := range compressedSuffixes {
			if p := filepath.Join(dataDir, rel) + sfx; try(p) {
				return p, nil
			}
		}
	}
	if _, known := Releases[name]; !known && !filepath.IsAbs(name) && dataDir != "" {
		// A relative path: to the working directory, else to the data directory.
		if _, err := os.Stat(name); err != nil {
			if in := filepath.Join(dataDir, name); exists(in) {
				name = in
			} else {
				tried = append(tried, in)
			}
		}
	}
	if st, err := os.Stat(name); err == nil {
		if st.Mode().IsRegular() {
			return name, nil
		}
		if st.IsDir() {
			for _, f := range ratingsFiles {
				for _, sfx := range compressedSuffixes {
					if p := filepath.Join(name, f) + sfx; try(p) {
						return p, nil
					}
				}
			}
		}
	} else if _, ok := Releases[name]; !ok {
		tried = append(tried, name)
	}
	hint := fmt.Sprintf("name a release (%s) or a local ratings file or directory", strings.Join(ReleaseNames(), ", "))
	if _, ok := Releases[name]; ok {
		hint = fmt.Sprintf("fetch it (Fetch downloads %s/%s.zip and checks its MD5) or point at a local copy of the ratings file", OfficialBaseURL, name)
	}
	return "", fmt.Errorf("locate %q: %w; looked in %s; %s", name, ErrNotFound, strings.Join(tried, ", "), hint)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
