package dns

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// DefaultResolvConf is where name servers are read from when Options.Servers
// is empty.
const DefaultResolvConf = "/etc/resolv.conf"

// maxResolvConfServers is glibc's MAXNS: later nameserver lines are ignored
// by the C library and by Go's resolver, so they are here too.
const maxResolvConfServers = 3

// parseResolvConf returns the name servers of a resolv.conf file (port 53)
// and one error per line it could not use, each naming the file and line.
// Bad lines are reported rather than fatal because the file belongs to the
// system, and the C library skips them too.
func parseResolvConf(name string, r io.Reader) ([]netip.AddrPort, []error, error) {
	var servers []netip.AddrPort
	var problems []error
	sc := bufio.NewScanner(r)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "nameserver" {
			continue
		}
		if len(fields) != 2 {
			problems = append(problems, fmt.Errorf("%s:%d: nameserver line needs exactly one address, got %d fields",
				name, lineNo, len(fields)-1))
			continue
		}
		// Zones ("fe80::1%eth0") are legal for link-local servers.
		addr, err := netip.ParseAddr(fields[1])
		if err != nil {
			problems = append(problems, fmt.Errorf("%s:%d: nameserver %q is not an IP address: %w",
				name, lineNo, fields[1], err))
			continue
		}
		if len(servers) == maxResolvConfServers {
			problems = append(problems, fmt.Errorf("%s:%d: nameserver %s ignored: only the first %d are used",
				name, lineNo, addr, maxResolvConfServers))
			continue
		}
		servers = append(servers, netip.AddrPortFrom(addr, 53))
	}
	if err := sc.Err(); err != nil {
		return nil, problems, fmt.Errorf("read %s: %w", name, err)
	}
	return servers, problems, nil
}

// parseServer accepts "ip:port" ("[v6]:port") or a bare IP meaning port 53.
func parseServer(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return netip.AddrPort{}, fmt.Errorf("name server %q: port 0", s)
		}
		return ap, nil
	}
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("name server %q: want ip:port or ip", s)
	}
	return netip.AddrPortFrom(addr, 53), nil
}
