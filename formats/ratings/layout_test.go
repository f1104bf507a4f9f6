package ratings

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

func unix(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func TestResolveTableSettings(t *testing.T) {
	def := DefaultTableSettings
	with := func(f func(s *TableSettings)) TableSettings {
		s := def
		f(&s)
		return s
	}
	if l, err := def.Resolve(); err != nil || l != nil {
		t.Errorf("defaults: %v, %v; want nil (recognise a MovieLens layout)", l, err)
	}
	l, err := with(func(s *TableSettings) { s.Layout = "ratings.dat" }).Resolve()
	if err != nil || !reflect.DeepEqual(*l, FormatDat.Layout()) {
		t.Errorf("layout ratings.dat: %+v, %v", l, err)
	}
	l, err = with(func(s *TableSettings) {
		s.User, s.Item, s.Rating, s.Time, s.TimeFormat = "user", "item", "stars", "date", "2006-01-02"
	}).Resolve()
	want := Layout{Name: LayoutCustom, Delimiter: ",", Header: true, User: Column{Name: "user"}, Item: Column{Name: "item"},
		Rating: Column{Name: "stars"}, Time: Column{Name: "date"}, TimeFormat: "2006-01-02"}
	if err != nil || !reflect.DeepEqual(*l, want) {
		t.Errorf("custom: %+v, %v; want %+v", l, err, want)
	}
	l, err = with(func(s *TableSettings) { s.Delimiter, s.Header, s.Time = "tab", false, "1" }).Resolve()
	if err != nil || l.Delimiter != "\t" || l.User.Pos != 1 || l.Item.Pos != 2 || l.Rating.Pos != 3 || l.Time.Pos != 1 {
		if err == nil {
			t.Errorf("tab, no header: %+v", l)
		}
	}
	for _, tc := range []struct {
		name string
		s    TableSettings
		want string
	}{
		{"preset and columns", with(func(s *TableSettings) { s.Layout, s.User = "u.data", "1" }), "layout = \"u.data\" fixes"},
		{"name without header", with(func(s *TableSettings) { s.Header, s.User = false, "user" }), "user_column = \"user\": a column name needs header = true"},
		{"same column twice", with(func(s *TableSettings) { s.Header, s.Time = false, "1" }), "user_column and time_column both name column 1"},
		{"bad time format", with(func(s *TableSettings) { s.TimeFormat = "unixms" }), "time_format: \"unixms\" is neither"},
		{"position 0", with(func(s *TableSettings) { s.Rating = "0" }), "rating_column: column position 0"},
		{"quote delimiter", with(func(s *TableSettings) { s.Delimiter = `"` }), "delimiter: "},
	} {
		if _, err := tc.s.Resolve(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// ingestText ingests text with a layout (nil: recognised) and returns the rows, the id
// dictionary and the stats.
func ingestLayout(t *testing.T, text []byte, l *Layout, opts IngestOptions) ([]Rating, []IDName, Stats) {
	t.Helper()
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "in"), text)
	dst := filepath.Join(dir, "ratings.parquet")
	opts.Layout = l
	st, err := Ingest(context.Background(), src, dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadAll[Rating](context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	names, err := ReadAll[IDName](context.Background(), IDNamesPath(dst))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].TimeMS = 0
	}
	return rows, names, st
}

func custom(t *testing.T, s TableSettings) *Layout {
	t.Helper()
	l, err := s.Resolve()
	if err != nil || l == nil {
		t.Fatalf("resolve %+v: %v, %v", s, l, err)
	}
	return l
}

func zstdBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The two foreign headers of issue 20, string ids, ISO dates, milliseconds, a header-less
// TSV by position, '::' with string ids, quoted fields and CRLF, each compressed or not,
// ingest to the same rows; the ids that are not plain numbers are coded in order of first
// appearance and listed in the dictionary.
func TestIngestCustomLayouts(t *testing.T) {
	s := DefaultTableSettings
	wantRows := []Rating{
		{User: -1, Item: -1, Rating: 4, Timestamp: unix("2020-01-02T00:00:00Z")},
		{User: -2, Item: -1, Rating: 2.5, Timestamp: unix("2020-01-03T00:00:00Z")},
		{User: -1, Item: 17, Rating: 5, Timestamp: unix("2020-02-01T00:00:00Z")},
		{User: 42, Item: -2, Rating: 1, Timestamp: unix("2019-12-31T00:00:00Z")},
	}
	wantNames := []IDName{{"user", -1, "u1"}, {"user", -2, "u 2"}, {"item", -1, "i9"}, {"item", -2, "007"}}
	ms := func(d string) string { return itoa(unix(d) * 1000) }
	tests := []struct {
		name string
		text string
		set  func(s *TableSettings)
	}{
		{"item,user,stars,date", "item,user,stars,date\ni9,u1,4,2020-01-02\ni9,u 2,2.5,2020-01-03\n17,u1,5.0,2020-02-01\n007,42,1,2019-12-31\n",
			func(s *TableSettings) {
				s.User, s.Item, s.Rating, s.Time, s.TimeFormat = "user", "item", "stars", "date", "2006-01-02"
			}},
		{"user_id,item_id,rating,ts (unix_ms)", "user_id,item_id,rating,ts\nu1,i9,4," + ms("2020-01-02T00:00:00Z") + "\nu 2,i9,2.5," + ms("2020-01-03T00:00:00Z") + "\nu1,17,5," + ms("2020-02-01T00:00:00Z") + "\n42,007,1," + ms("2019-12-31T00:00:00Z") + "\n",
			func(s *TableSettings) {
				s.User, s.Item, s.Rating, s.Time, s.TimeFormat = "user_id", "item_id", "rating", "ts", TimeUnixMS
			}},
		{"rfc3339, CRLF, quoted", "when;who;what;stars\r\n2020-01-02T01:00:00+01:00;\"u1\";i9;4\r\n\"2020-01-03 00:00:00\";\"u 2\";i9;2.5\r\n2020-02-01T00:00:00Z;u1;17;5\r\n2019-12-31;42;\"007\";1\r\n",
			func(s *TableSettings) {
				s.User, s.Item, s.Rating, s.Time, s.Delimiter, s.TimeFormat = "who", "what", "stars", "when", ";", TimeRFC3339
			}},
		{"tsv by position, no header", "4\t" + itoa(unix("2020-01-02T00:00:00Z")) + "\ti9\tu1\n2.5\t" + itoa(unix("2020-01-03T00:00:00Z")) + "\ti9\tu 2\n\n5\t" + itoa(unix("2020-02-01T00:00:00Z")) + "\t17\tu1\n1\t" + itoa(unix("2019-12-31T00:00:00Z")) + ".75\t007\t42\n",
			func(s *TableSettings) {
				s.Delimiter, s.Header, s.User, s.Item, s.Rating, s.Time = "tab", false, "4", "3", "1", "2"
			}},
		{"::-separated string ids", "u1::i9::4::2020-01-02\nu 2::i9::2.5::2020-01-03\nu1::17::5::2020-02-01\n42::007::1::2019-12-31\n",
			func(s *TableSettings) { s.Delimiter, s.Header, s.TimeFormat = "::", false, TimeRFC3339 }},
	}
	for _, tc := range tests {
		for _, comp := range []string{"plain", "gzip", "zstd"} {
			t.Run(tc.name+"/"+comp, func(t *testing.T) {
				set := s
				tc.set(&set)
				data := []byte(tc.text)
				switch comp {
				case "gzip":
					data = gzipBytes(t, data)
				case "zstd":
					data = zstdBytes(t, data)
				}
				rows, names, st := ingestLayout(t, data, custom(t, set), IngestOptions{})
				if !reflect.DeepEqual(rows, wantRows) {
					t.Errorf("rows\n%v\nwant\n%v", rows, wantRows)
				}
				if !reflect.DeepEqual(names, wantNames) {
					t.Errorf("names %v, want %v", names, wantNames)
				}
				if st.Layout != LayoutCustom || st.Compression != map[string]string{"plain": "none"}[comp]+map[string]string{"gzip": "gzip", "zstd": "zstd"}[comp] ||
					st.Users != 3 || st.Items != 3 || st.TextUsers != 2 || st.TextItems != 2 || st.Ratings != 4 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// The dictionary codes follow the input order, not the workers: any number of workers
// and any block size write the same files.
func TestTextIDsDeterministic(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,item,rating,time\n")
	for i := range 5000 {
		b.WriteString("user-" + itoa(int64(i*7919%613)) + ",item-" + itoa(int64(i*104729%997)) + ",3," + itoa(int64(1e9+i)) + "\n")
	}
	l := custom(t, TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "rating", Time: "time", Delimiter: ",", Header: true, TimeFormat: TimeUnix})
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "in.csv"), []byte(b.String()))
	var first [][]byte
	for k, opts := range []IngestOptions{{Workers: 1}, {Workers: 4, BlockBytes: 1000}, {Workers: 3, BlockBytes: 333}} {
		opts.Layout = l
		dst := filepath.Join(dir, itoa(int64(k)), "ratings.parquet")
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if _, err := Ingest(context.Background(), src, dst, opts); err != nil {
			t.Fatal(err)
		}
		got := [][]byte{readBytes(t, dst), readBytes(t, IDNamesPath(dst))}
		if k == 0 {
			first = got
		} else if !bytes.Equal(got[0], first[0]) || !bytes.Equal(got[1], first[1]) {
			t.Errorf("options %+v: different files", opts)
		}
	}
}

// Issue 19 item 8: of rows with the same user, item and time the last is kept, and they
// are counted; times before 1970 and after 2100 are counted, not refused.
func TestDuplicatesAndOddTimes(t *testing.T) {
	text := "userId,movieId,rating,timestamp\n" +
		"1,10,1.0,100\n" + // repeated below: dropped
		"2,10,3.0,100\n" +
		"1,10,5.0,101\n" + // another time: kept
		"1,10,2.0,100\n" + // repeated below: dropped
		"3,11,4.0,-86400\n" + // 1969-12-31
		"1,10,4.5,100\n" + // the last of (1, 10, 100): kept
		"4,12,4.0,5000000000\n" // 2128
	rows, _, st := ingestLayout(t, []byte(text), nil, IngestOptions{Workers: 2, BlockBytes: 20})
	want := []Rating{
		{User: 2, Item: 10, Rating: 3, Timestamp: 100},
		{User: 1, Item: 10, Rating: 5, Timestamp: 101},
		{User: 3, Item: 11, Rating: 4, Timestamp: -86400},
		{User: 1, Item: 10, Rating: 4.5, Timestamp: 100},
		{User: 4, Item: 12, Rating: 4, Timestamp: 5000000000},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
	if st.Duplicates != 2 || st.Ratings != 5 || st.Before1970 != 1 || st.After2100 != 1 || st.Users != 4 || st.Items != 3 {
		t.Errorf("stats %+v: want 2 duplicates dropped, 5 ratings, 1 time before 1970, 1 after 2100", st)
	}
	// Duplicates of odd times are not counted twice.
	_, _, st = ingestLayout(t, []byte("userId,movieId,rating,timestamp\n1,1,1,-5\n1,1,2,-5\n2,1,3,1\n"), nil, IngestOptions{})
	if st.Duplicates != 1 || st.Before1970 != 1 {
		t.Errorf("stats %+v: want 1 duplicate, 1 time before 1970", st)
	}
}

// Parquet inputs: string ids, TIMESTAMP columns of any unit, DATE, integer unix times,
// float ratings, columns by name or position, in any order among other columns.
func TestIngestParquet(t *testing.T) {
	type stringIDs struct {
		Note   string    `parquet:"note"`
		Item   string    `parquet:"item"`
		User   string    `parquet:"user"`
		Stars  float64   `parquet:"stars"`
		Date   time.Time `parquet:"date,timestamp(microsecond)"`
		Other  int64     `parquet:"other"`
		Opt    *int32    `parquet:"opt,optional"`
		Ignore []int32   `parquet:"ignore,list"`
	}
	type intIDs struct {
		UserID int64   `parquet:"user_id"`
		ItemID int32   `parquet:"item_id"`
		Rating float32 `parquet:"rating"`
		TS     int64   `parquet:"ts"`
	}
	type dates struct {
		UserID int32 `parquet:"userId"`
		ItemID int32 `parquet:"movieId"`
		Rating int32 `parquet:"rating"`
		Day    int32 `parquet:"timestamp,date"` // days since 1970-01-01
	}
	dir := t.TempDir()
	ts := []string{"2020-01-02T03:04:05Z", "2020-01-03T00:00:00Z", "1969-07-20T20:17:00Z"}
	write := func(name string, rows any) string {
		t.Helper()
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var werr error
		switch rs := rows.(type) {
		case []stringIDs:
			werr = parquet.Write(f, rs)
		case []intIDs:
			werr = parquet.Write(f, rs)
		case []dates:
			werr = parquet.Write(f, rs)
		}
		if werr != nil {
			t.Fatal(werr)
		}
		f.Close()
		return path
	}
	at := func(i int) time.Time { tm, _ := time.Parse(time.RFC3339, ts[i]); return tm.Add(999 * time.Millisecond) }
	p1 := write("strings.parquet", []stringIDs{
		{Item: "i9", User: "u1", Stars: 4, Date: at(0)}, {Item: "i9", User: "u2", Stars: 2.5, Date: at(1)}, {Item: "12", User: "u1", Stars: 5, Date: at(2)},
	})
	p2 := write("ints.parquet", []intIDs{{UserID: 5000000000, ItemID: 3, Rating: 1.5, TS: unix(ts[0]) * 1000}, {UserID: 7, ItemID: -3, Rating: 2, TS: unix(ts[2]) * 1000}})
	p3 := write("dates.parquet", []dates{{UserID: 1, ItemID: 2, Rating: 3, Day: int32(unix(ts[1]) / 86400)}})
	tests := []struct {
		name      string
		src       string
		layout    *Layout
		wantRows  []Rating
		wantNames []IDName
	}{
		{"string ids, timestamp(us), by name", p1, custom(t, TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "stars", Time: "date", Delimiter: ",", Header: true, TimeFormat: TimeUnix}),
			[]Rating{{User: -1, Item: -1, Rating: 4, Timestamp: unix(ts[0])}, {User: -2, Item: -1, Rating: 2.5, Timestamp: unix(ts[1])}, {User: -1, Item: 12, Rating: 5, Timestamp: unix(ts[2])}},
			[]IDName{{"user", -1, "u1"}, {"user", -2, "u2"}, {"item", -1, "i9"}}},
		{"int64 ids, unix_ms, by position", p2, custom(t, TableSettings{Layout: "auto", User: "1", Item: "2", Rating: "3", Time: "4", Delimiter: ",", Header: true, TimeFormat: TimeUnixMS}),
			[]Rating{{User: -1, Item: 3, Rating: 1.5, Timestamp: unix(ts[0])}, {User: 7, Item: -1, Rating: 2, Timestamp: unix(ts[2])}},
			[]IDName{{"user", -1, "5000000000"}, {"item", -1, "-3"}}},
		{"MovieLens names, DATE", p3, nil,
			[]Rating{{User: 1, Item: 2, Rating: 3, Timestamp: unix("2020-01-03T00:00:00Z")}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "ratings.parquet")
			if err := CheckTable(context.Background(), tc.src, tc.layout); err != nil {
				t.Fatalf("check: %v", err)
			}
			st, err := Ingest(context.Background(), tc.src, dst, IngestOptions{Layout: tc.layout})
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := ReadAll[Rating](context.Background(), dst)
			for i := range rows {
				rows[i].TimeMS = 0
			}
			names, _ := ReadAll[IDName](context.Background(), IDNamesPath(dst))
			if !reflect.DeepEqual(rows, tc.wantRows) || !reflect.DeepEqual(names, tc.wantNames) || st.Layout != LayoutParquet {
				t.Errorf("rows %v names %v (%s); want %v, %v", rows, names, st.Layout, tc.wantRows, tc.wantNames)
			}
		})
	}
	// A missing column is named, with the table's columns.
	err := CheckTable(context.Background(), p1, nil)
	if err == nil || !strings.Contains(err.Error(), `no column "userId" (user_column)`) || !strings.Contains(err.Error(), "note, item, user, stars") {
		t.Errorf("check with MovieLens names: %v", err)
	}
	l := custom(t, TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "stars", Time: "ignore", Delimiter: ",", Header: true, TimeFormat: TimeUnix})
	if err := CheckTable(context.Background(), p1, l); err == nil || !strings.Contains(err.Error(), "no column \"ignore\"") && !strings.Contains(err.Error(), "repeated") {
		t.Errorf("a list column as time: %v", err)
	}
	l = custom(t, TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "stars", Time: "other", Delimiter: ",", Header: true, TimeFormat: "2006-01-02"})
	if err := CheckTable(context.Background(), p1, l); err == nil || !strings.Contains(err.Error(), `time_format "2006-01-02" reads text`) {
		t.Errorf("an integer time column with a text layout: %v", err)
	}
}

// CheckTable refuses a header that lacks a column, naming the column, its setting and the
// header's columns; a bad value in the first rows, naming the line and the column; and
// passes a good table.
func TestCheckTable(t *testing.T) {
	dir := t.TempDir()
	set := DefaultTableSettings
	set.User, set.Item, set.Rating, set.Time, set.TimeFormat = "user", "item", "stars", "date", TimeRFC3339
	l := custom(t, set)
	for _, tc := range []struct {
		name, text string
		layout     *Layout
		want       string
	}{
		{"foreign header, no settings", "item,user,stars,date\ni1,u1,4,2020-01-01\n", nil, "neither u.data (TAB), ratings.dat (::) nor ratings.csv"},
		{"header lacks a column", "item,user,rating,date\ni1,u1,4,2020-01-01\n", l, `:1: header "item,user,rating,date" has no column "stars" (rating_column); its columns: item, user, rating, date`},
		{"bad date", "item,user,stars,date\ni1,u1,4,2020-01-01\ni1,u1,4,01/02/2020\n", l, `:3: field date: "01/02/2020" is not an RFC 3339`},
		{"field count", "item,user,stars,date\ni1,u1,4\n", l, ":2: want 4 fields"},
		{"data for a header", "i1,u1,4,2020-01-01\n", l, `has no column "user" (user_column); its columns: i1, u1, 4, 2020-01-01 (is the first line data? then set header = false`},
		{"header only", "item,user,stars,date\n", l, "no ratings"},
		{"MovieLens csv with a bad rating", "userId,movieId,rating,timestamp\n1,2,x,3\n", nil, ":2: field rating: "},
		{"good", "item,user,stars,date\r\ni1,u1,4,2020-01-01\r\n", l, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")), []byte(tc.text))
			err := CheckTable(context.Background(), p, tc.layout)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("err = %v, want one naming %s and containing %q", err, p, tc.want)
			}
		})
	}
}

// The time formats, alone.
func TestTimeFormats(t *testing.T) {
	for _, tc := range []struct {
		format, in string
		want       int64
		bad        bool
	}{
		{TimeUnix, "1260759144", 1260759144, false},
		{TimeUnix, "-3", -3, false},
		{TimeUnix, "1260759144.9", 1260759144, false},
		{TimeUnix, "-0.5", -1, false},
		{TimeUnix, "1e", 0, true},
		{TimeUnix, "0x10", 0, true},
		{TimeUnixMS, "1260759144999", 1260759144, false},
		{TimeUnixMS, "-1", -1, false},
		{TimeRFC3339, "2009-12-14T02:52:24Z", 1260759144, false},
		{TimeRFC3339, "2009-12-14T03:52:24.5+01:00", 1260759144, false},
		{TimeRFC3339, "2009-12-14 02:52:24", 1260759144, false},
		{TimeRFC3339, "2009-12-14T02:52:24", 1260759144, false},
		{TimeRFC3339, "2009-12-14", 1260748800, false},
		{TimeRFC3339, "1960-01-01", -315619200, false},
		{TimeRFC3339, "14/12/2009", 0, true},
		{"02/01/2006 15:04", "14/12/2009 02:52", 1260759120, false},
		{"Jan 2 2006", "Dec 14 2009", 1260748800, false},
		{"Jan 2 2006", "2009-12-14", 0, true},
	} {
		tp := timeParser{format: tc.format}
		for range 2 { // the second time from the cache
			got, err := tp.parse([]byte(tc.in))
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("%s %q: %d, %v; want %d (error %v)", tc.format, tc.in, got, err, tc.want, tc.bad)
			}
		}
	}
}

// FuzzLineParser: the parser of a custom layout never panics, errors are *FieldError, and
// a plain id comes back as its own code.
func FuzzLineParser(f *testing.F) {
	for _, s := range []string{"u1,i9,4,2020-01-01", `"u,1",i9,4,2020-01-01`, `a,"b""c",1,2020-01-01T00:00:00Z`, "1,2,3,4", ",,,", `"`, "x,y,z,w,v"} {
		f.Add(s)
	}
	l := Layout{Name: LayoutCustom, Delimiter: ",", User: Column{Pos: 1}, Item: Column{Pos: 2}, Rating: Column{Pos: 3}, Time: Column{Pos: 4}, TimeFormat: TimeRFC3339}
	f.Fuzz(func(t *testing.T, line string) {
		p := newLineParser(&l, [4]int{0, 1, 2, 3}, 4, [4]string{"u", "i", "r", "t"})
		r, user, item, err := p.parse([]byte(line))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: error %v is not a *FieldError", line, err)
			}
			return
		}
		if (user != nil && r.User != 0) || (item != nil && r.Item != 0) || r.User < 0 || r.Item < 0 {
			t.Fatalf("%q: %v with text ids %q, %q", line, r, user, item)
		}
	})
}

// The planted data set is a ratings.csv of its own: table settings are refused with it.
