package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// nodeRecord is WorkDir/state/nodes/<id>.json: the last key a node ID
// completed with, for Plan's reasons.
type nodeRecord struct {
	ID      string            `json:"id"`
	Stage   string            `json:"stage"`
	Version string            `json:"version"`
	Key     CacheKey          `json:"key"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs"`
	Outputs map[string]string `json:"outputs"`
	Updated time.Time         `json:"updated"`
}

// sanitizeID maps a node ID to a file name; IDs that needed changing get a
// hash suffix so distinct IDs stay distinct.
func sanitizeID(id string) string {
	var b strings.Builder
	changed := false
	for _, c := range id {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	s := b.String()
	if changed || s == "." || s == ".." || len(s) > 100 {
		sum := sha256.Sum256([]byte(id))
		if len(s) > 100 {
			s = s[:100]
		}
		s += "-" + hex.EncodeToString(sum[:4])
	}
	return s
}

func (s *session) recordPath(id string) string {
	return filepath.Join(s.work, "state", "nodes", sanitizeID(id)+".json")
}

func (s *session) loadRecord(id string) *nodeRecord {
	b, err := os.ReadFile(s.recordPath(id))
	if err != nil {
		return nil
	}
	var r nodeRecord
	if json.Unmarshal(b, &r) != nil || r.ID != id {
		return nil
	}
	return &r
}

func (s *session) saveRecord(r *nodeRecord) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.recordPath(r.ID), b)
}
