package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Temporary names carry the writing process's id: "<prefix><pid>-<random>"
// in place of the pattern's last "*" (a pattern without one gets it at its
// end). A temporary file or directory that a killed process left behind is
// thereby known by its name alone and removed by RemoveStale; one of a
// live process is not touched.

// CreateTemp creates a new file in dir as os.CreateTemp does, but with the
// mode of an ordinary new file, 0666 less the umask (os.CreateTemp makes
// 0600), and a name that carries the process id.
func CreateTemp(dir, pattern string) (*os.File, error) {
	for range 10000 {
		name := tempName(dir, pattern)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}

// MkdirTemp creates a new directory in dir as os.MkdirTemp does, but with
// the mode of an ordinary new directory, 0777 less the umask
// (os.MkdirTemp makes 0700), and a name that carries the process id.
func MkdirTemp(dir, pattern string) (string, error) {
	for range 10000 {
		name := tempName(dir, pattern)
		err := os.Mkdir(name, 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
	return "", &fs.PathError{Op: "mkdirtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}

func tempName(dir, pattern string) string {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	return filepath.Join(dir, prefix+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
}

// tmpMarks are the markers of the temporary names this package and its
// users make: ".NAME.tmp-PID-N" (Create, an export being written) and
// ".NAME.old-PID-N" (an export being replaced).
var tmpMarks = []string{".tmp-", ".old-"}

// staleTemp reports whether name is a temporary name whose process is gone.
func staleTemp(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	for _, m := range tmpMarks {
		i := strings.LastIndex(name, m)
		if i < 0 {
			continue
		}
		rest := name[i+len(m):]
		j := strings.IndexByte(rest, '-')
		if j <= 0 {
			continue
		}
		pid, err := strconv.Atoi(rest[:j])
		if err != nil || pid <= 0 {
			continue
		}
		return !alive(pid)
	}
	return false
}

// RemoveStale removes, under root (walked recursively; a missing root is
// nothing to do), the temporary files and directories that processes that
// are gone left behind: a write killed before its rename. It returns what
// it removed.
func RemoveStale(root string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == root || !staleTemp(d.Name()) {
			return nil
		}
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		removed = append(removed, p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return removed, err
}

// ReplaceDir puts the complete directory tmp in place of dst in two
// renames: dst (if any) is first moved aside to a hidden ".old-" sibling,
// which is then removed. A reader sees the old dst, no dst, or the new
// one, never a mix; a process killed between the renames leaves no dst,
// and leftovers that RemoveStale knows.
func ReplaceDir(tmp, dst string) error {
	parent := filepath.Dir(dst)
	old := ""
	if _, err := os.Lstat(dst); err == nil {
		old = tempName(parent, "."+filepath.Base(dst)+".old-*")
		if err := os.Rename(dst, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	syncDir(parent)
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
