package standalone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// EndpointsFile, in the data directory, says where a running standalone's
// parts listen: its embedded Redis and broker choose their ports at start
// when not told, and `trawler state backup --standalone DIR` and operators'
// scripts need them. It is written once everything listens and removed
// when the standalone ends; a killed one leaves it, and its PID then names
// no process.
const EndpointsFile = "standalone.json"

// Endpoints are the addresses of a running standalone.
type Endpoints struct {
	PID   int      `json:"pid"`
	Redis string   `json:"redis"`
	Kafka []string `json:"kafka"`
	Admin string   `json:"admin"`
	// CDX is the OutbackCDX API's address; empty when it is off.
	CDX string `json:"cdx,omitempty"`
	// AdminTokenFile is the absolute path of the file holding the admin
	// API's (and CDX writes') token: the given one, or <data>/admin.token.
	AdminTokenFile string `json:"adminTokenFile,omitempty"`
}

// dialable turns a listen address into one a client on this machine can
// dial: an unspecified host (":8081", "[::]:8081") becomes loopback.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// writeEndpoints writes e to dataDir atomically and returns what removes it.
func writeEndpoints(dataDir string, e Endpoints) (remove func(), err error) {
	e.Admin = dialable(e.Admin)
	if e.CDX != "" {
		e.CDX = dialable(e.CDX)
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	path := filepath.Join(dataDir, EndpointsFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// ReadEndpoints reads the endpoints of the standalone running on dataDir.
// It fails, saying why, when none runs there: no file, a file that does
// not parse, or one whose process is gone.
func ReadEndpoints(dataDir string) (Endpoints, error) {
	path := filepath.Join(dataDir, EndpointsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoints{}, fmt.Errorf("no standalone running on %s: no %s", dataDir, EndpointsFile)
	}
	if err != nil {
		return Endpoints{}, fmt.Errorf("read %s: %w", path, err)
	}
	var e Endpoints
	if err := json.Unmarshal(b, &e); err != nil {
		return Endpoints{}, fmt.Errorf("%s: %w", path, err)
	}
	if e.PID <= 0 || e.Redis == "" || len(e.Kafka) == 0 {
		return Endpoints{}, fmt.Errorf("%s: pid, redis and kafka are required, got %+v", path, e)
	}
	if err := syscall.Kill(e.PID, 0); errors.Is(err, syscall.ESRCH) {
		return Endpoints{}, fmt.Errorf("no standalone running on %s: %s names process %d, which is gone (a killed standalone's leftover)", dataDir, EndpointsFile, e.PID)
	}
	return e, nil
}
