package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// checkDocs is how many documents or records the checks read.
const checkDocs = 100

var errEnough = errors.New("enough")

// CheckDir checks that dir is a folder holding at least one file whose name starts with a
// year (see ScanDir), without reading the files.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is a file: corpus_format = \"text\" reads a folder of dated files (for a file use csv, jsonl, ngram-v2 or ngram-v3)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, ok := YearOfName(e.Name()); ok && e.Type().IsRegular() {
			return nil
		}
	}
	return fmt.Errorf("%s: no file name starts with a year (such as 1790_george_washington.txt)", dir)
}

// CheckCSV reads the header and the first documents of a dated CSV file as IngestCSVFields
// would, so that a wrong header stops before anything runs.
func CheckCSV(ctx context.Context, path string, fields DocFields) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n := 0
	err = ScanCSVFields(ctx, f, path, fields, func(Document) error {
		if n++; n >= checkDocs {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// CheckJSONL reads the first documents of a JSON Lines file as IngestJSONL would.
func CheckJSONL(ctx context.Context, path string, fields DocFields) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanJSONL(ctx, f, path, fields, checkDocs, func(Document) error { return nil })
}

// CheckNgrams reads the first records of the first n-gram file as IngestNgrams would.
func CheckNgrams(ctx context.Context, files []string, opt NgramOptions) error {
	if len(files) == 0 {
		return errors.New("no n-gram files")
	}
	n := 0
	err := ScanNgramFile(ctx, files[0], opt, func(*Ngram) error {
		if n++; n >= checkDocs {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}
