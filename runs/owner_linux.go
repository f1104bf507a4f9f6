package runs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// procStart returns when process pid started, as Owner.Started records it:
// "<boot id>:<start time in clock ticks since boot>" (field 22 of
// /proc/PID/stat; the boot id of /proc/sys/kernel/random/boot_id, so that
// a process of an earlier boot never matches). found is false when there
// is no such process, or only its zombie; err says that /proc cannot tell.
func procStart(pid int) (started string, found bool, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses: the fields after it follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", false, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want 20 or more", pid, len(f))
	}
	// f[0] is field 3, the state; f[19] is field 22, the start time.
	if f[0] == "Z" || f[0] == "X" {
		return "", false, nil // exited, not yet reaped
	}
	return bootID() + ":" + f[19], true, nil
}

// bootID is this boot's id ("" when unreadable: then start times are
// compared alone).
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
