package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A host crawled on a port other than the default is one row under its
// host name, and #remaining asks for that name: the caller adds up the
// queues of all its ports (frontier.QueuedByHostName), as Heritrix's
// CrawlHost counts every port of a host.
func TestHostsReportRemainingWithPort(t *testing.T) {
	a := New(Options{CrawlName: "c", Seeds: []string{"http://port.example.org:8080/"}})
	for _, line := range []string{
		`{"timestamp": "2024-01-17T09:00:03.000Z", "url": "http://port.example.org:8080/", "status_code": 200, "size": 500, "content_length": 400, "mimetype": "text/html", "hop_path": "", "via": "", "seed": "s", "host": "port.example.org:8080", "crawl_name": "c"}`,
		`{"timestamp": "2024-01-17T09:00:04.000Z", "url": "http://port.example.org:8081/a", "status_code": 200, "size": 500, "content_length": 400, "mimetype": "text/html", "hop_path": "L", "via": "http://port.example.org:8080/", "seed": "s", "host": "port.example.org:8081", "crawl_name": "c"}`,
	} {
		ev, err := messages.DecodeCrawled([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		a.Add(ev)
	}
	var asked []string
	dir := t.TempDir()
	err := a.WriteAll(dir, RunInfo{Remaining: func(host string) int64 {
		asked = append(asked, host)
		if host == "port.example.org" {
			return 5
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HostsReport))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "2 1000 port.example.org 0 5 ") {
		t.Fatalf("hosts report rows %q, want one row for port.example.org with 5 remaining (asked for %q)", rows, asked)
	}
}
