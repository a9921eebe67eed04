package frontier

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The concurrency test re-executes the test binary as extra worker
// processes; these variables tell a child what to do.
const (
	childEnv    = "TRAWLER_FRONTIER_CHILD"     // Redis address
	childOutEnv = "TRAWLER_FRONTIER_CHILD_OUT" // file for the child's records
	childLoops  = 4                            // crawl loops per child process
)

// fetchRecord is one claimed and completed URI as a worker saw it.
type fetchRecord struct {
	url, host     string
	claimed, done int64 // ns since the epoch: the claim returned, Complete was called
	lost          bool  // Complete found the lease gone
}

// workLoop claims and completes URIs until the frontier is drained.
func workLoop(ctx context.Context, f *Frontier, emit func(fetchRecord)) error {
	pol := testPolicy()
	for {
		cs, wait, err := f.Claim(ctx, 8, time.Minute)
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			st, err := f.Stats(ctx)
			if err != nil {
				return err
			}
			if st.Queued == 0 && st.InFlight == 0 {
				return nil
			}
			// Hosts are all leased by other loops: pause briefly.
			t := time.NewTimer(min(max(wait, 0), time.Millisecond))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		claimed := time.Now().UnixNano()
		outs := make([]Outcome, len(cs))
		for i, c := range cs {
			outs[i] = Outcome{Claim: c, Status: 200, Bytes: 1, Policy: pol}
		}
		done := time.Now().UnixNano()
		ok, err := f.Complete(ctx, outs)
		if err != nil {
			return err
		}
		for i, c := range cs {
			emit(fetchRecord{url: c.Launch.URL, host: c.Host, claimed: claimed, done: done, lost: !ok[i]})
		}
	}
}

// runChild is a worker process: childLoops crawl loops on the frontier at
// the Redis address in childEnv, writing one line per URI to childOutEnv.
func runChild() int {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(childEnv)})
	defer rdb.Close()
	f, err := New(rdb, "conc", Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, err := os.Create(os.Getenv(childOutEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, childLoops)
	for range childLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- workLoop(context.Background(), f, func(r fetchRecord) {
				mu.Lock()
				fmt.Fprintf(w, "%s %s %d %d %t\n", r.url, r.host, r.claimed, r.done, r.lost)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func readRecords(t *testing.T, path string) []fetchRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fetchRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			t.Fatalf("child record %q", line)
		}
		c, _ := strconv.ParseInt(f[2], 10, 64)
		d, _ := strconv.ParseInt(f[3], 10, 64)
		out = append(out, fetchRecord{url: f[0], host: f[1], claimed: c, done: d, lost: f[4] == "true"})
	}
	return out
}

// 8 crawl loops in this process and 2 worker processes share one frontier
// of 50,000 URIs over 500 hosts: every URI is claimed and completed exactly
// once, and no host is ever held by two claims at once.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 URIs")
	}
	rdb := backends()[0].open(t)
	ctx := context.Background()
	f, err := New(rdb, "conc", Options{})
	if err != nil {
		t.Fatal(err)
	}
	const hosts, perHost = 500, 100
	var batch []Candidate
	for p := range perHost {
		for h := range hosts {
			batch = append(batch, cand(fmt.Sprintf("host%03d.example", h), fmt.Sprintf("/page/%d", p), "L", false))
			if len(batch) == 2000 {
				admit(t, f, batch...)
				batch = batch[:0]
			}
		}
	}
	mustEqual(t, "queued", stats(t, f).Queued, hosts*perHost)

	dir := t.TempDir()
	var children []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+rdb.Options().Addr, childOutEnv+"="+filepath.Join(dir, strconv.Itoa(i)))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, cmd)
	}
	var mu sync.Mutex
	var records []fetchRecord
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := workLoop(ctx, f, func(r fetchRecord) { mu.Lock(); records = append(records, r); mu.Unlock() }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	local := len(records)
	for i, cmd := range children {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker process %d: %v", i, err)
		}
		records = append(records, readRecords(t, filepath.Join(dir, strconv.Itoa(i)))...)
	}
	if local == 0 || local == len(records) {
		t.Fatalf("work was not shared: %d of %d URIs in this process", local, len(records))
	}
	checkExactlyOnce(t, records, hosts*perHost)
	mustEqual(t, "finished", totals(t, f).URIs, hosts*perHost)
	checkInvariants(t, rdb, "{conc}:")
}

func checkExactlyOnce(t *testing.T, records []fetchRecord, want int) {
	t.Helper()
	byURL := map[string]int{}
	byHost := map[string][]fetchRecord{}
	for _, r := range records {
		if r.lost {
			t.Fatalf("%s: lease lost", r.url)
		}
		byURL[r.url]++
		byHost[r.host] = append(byHost[r.host], r)
	}
	for u, n := range byURL {
		if n != 1 {
			t.Fatalf("%s claimed %d times", u, n)
		}
	}
	mustEqual(t, "distinct URIs", len(byURL), want)
	for h, rs := range byHost {
		sort.Slice(rs, func(i, j int) bool { return rs[i].claimed < rs[j].claimed })
		for i := 1; i < len(rs); i++ {
			if rs[i].claimed <= rs[i-1].done {
				t.Fatalf("host %s held by two claims at once: %+v and %+v", h, rs[i-1], rs[i])
			}
		}
	}
}
