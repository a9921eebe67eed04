package clamdtest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartStop(t *testing.T) {
	start := time.Now()
	c := Start(t, 12345)
	t.Logf("clamd ready in %v", time.Since(start))
	for _, ep := range []struct{ network, addr string }{{"tcp", c.Addr}, {"unix", c.Socket}} {
		if err := c.ping(ep.network, ep.addr); err != nil {
			t.Errorf("ping %s %s: %v", ep.network, ep.addr, err)
		}
	}
	if len(c.Socket) > 100 {
		t.Errorf("socket path %q is too long for sun_path", c.Socket)
	}
	conf, err := os.ReadFile(filepath.Join(c.Dir, "clamd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "StreamMaxLength 12345\n") {
		t.Errorf("clamd.conf lacks the StreamMaxLength:\n%s", conf)
	}
	c.Stop()
	c.Stop() // idempotent; Cleanup calls it a third time
	if _, err := net.DialTimeout("tcp", c.Addr, time.Second); err == nil {
		t.Error("tcp still accepting after Stop")
	}
	if !strings.Contains(c.Log(), "--- clamd.log ---") {
		t.Errorf("Log() lacks clamd.log:\n%s", c.Log())
	}
}

func TestTwoInstances(t *testing.T) {
	a, b := Start(t, 1000), Start(t, 2000)
	if a.Addr == b.Addr || a.Socket == b.Socket || a.Dir == b.Dir {
		t.Fatalf("instances share endpoints: %+v %+v", a, b)
	}
}
