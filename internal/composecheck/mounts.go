package composecheck

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// mountedAt finds a service that bind-mounts hostPath (the file itself or
// a directory holding it) and returns that service's name and the path the
// file has inside its container. Services are tried in name order, so the
// answer is stable when several mount the same file.
func mountedAt(p *types.Project, hostPath string) (service, containerPath string, ok bool) {
	for _, name := range serviceNames(p) {
		best := -1
		for _, v := range p.Services[name].Volumes {
			if v.Type != types.VolumeTypeBind || !within(v.Source, hostPath) {
				continue
			}
			if len(v.Source) <= best {
				continue
			}
			r, err := filepath.Rel(v.Source, hostPath)
			if err != nil {
				continue
			}
			best = len(v.Source)
			containerPath = path.Join(v.Target, filepath.ToSlash(r))
		}
		if best >= 0 {
			return name, containerPath, true
		}
	}
	return "", "", false
}

// hostPathOf maps a path inside a service's container back to the host
// through the service's bind mounts, choosing the most specific mount. It
// fails for paths that only exist in the image or in a named volume.
func hostPathOf(s types.ServiceConfig, containerPath string) (string, bool) {
	containerPath = path.Clean(containerPath)
	best, host := -1, ""
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		target := path.Clean(v.Target)
		if containerPath != target && !strings.HasPrefix(containerPath, strings.TrimSuffix(target, "/")+"/") {
			continue
		}
		if len(target) <= best {
			continue
		}
		best = len(target)
		host = filepath.Join(v.Source, filepath.FromSlash(strings.TrimPrefix(containerPath, target)))
	}
	return host, best >= 0
}
