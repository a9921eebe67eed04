package composecheck

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// defaultAdminPort is used when neither the service nor the Dockerfile sets
// TRAWLER_ADMIN_ADDR.
const defaultAdminPort = 9100

// LoadCompose loads and validates a compose file the way `docker compose`
// does: YAML parsing, schema validation, interpolation (with an empty
// environment, so `${VAR:-default}` takes its default), normalisation and
// the consistency checks (undefined services in depends_on, undeclared
// named volumes and networks). Relative paths are resolved against the
// file's directory.
func LoadCompose(ctx context.Context, file string) (*types.Project, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("compose file %s: %w", file, err)
	}
	dir := filepath.Dir(abs)
	details := types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		Environment: types.Mapping{},
	}
	// Like docker compose, fall back to the directory name when the file
	// has no top-level `name:`.
	named := func(o *loader.Options) {
		o.SetProjectName(loader.NormalizeProjectName(filepath.Base(dir)), false)
	}
	p, err := loader.LoadWithContext(ctx, details, named)
	if err != nil {
		return nil, fmt.Errorf("load compose file %s: %w", file, err)
	}
	return p, nil
}

// CheckCompose loads composeFile and applies every rule to it and to the
// files under root/deploy it uses. root is the repository root: bind
// mounts and build contexts must lie inside it. It returns nil when all
// rules hold; otherwise one error per broken rule, sorted, each naming the
// service or file at fault. A file that does not load yields that error
// alone.
func CheckCompose(ctx context.Context, root, composeFile string) []error {
	root, err := filepath.Abs(root)
	if err != nil {
		return []error{fmt.Errorf("repository root %s: %w", root, err)}
	}
	p, err := LoadCompose(ctx, composeFile)
	if err != nil {
		return []error{err}
	}
	var errs []error
	errs = append(errs, checkBuilds(p, root)...)
	errs = append(errs, checkBindMounts(p, root)...)
	errs = append(errs, checkPublishedPorts(p)...)
	errs = append(errs, checkTrawlerServices(p, root)...)
	errs = append(errs, checkHealthGates(p)...)
	errs = append(errs, checkDeploy(p, root)...)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

// serviceNames returns the project's service names in a stable order, so
// errors come out the same way on every run.
func serviceNames(p *types.Project) []string {
	return sortedKeys(p.Services)
}

// checkBuilds requires every build to use a context inside the repository
// with a Dockerfile that exists. (The loader already rejects a service
// with neither image nor build.)
func checkBuilds(p *types.Project, root string) []error {
	var errs []error
	for _, name := range serviceNames(p) {
		s := p.Services[name]
		if s.Build == nil || s.Build.DockerfileInline != "" {
			continue
		}
		if !within(root, s.Build.Context) {
			errs = append(errs, fmt.Errorf("service %q: build context %s is outside the repository %s", name, s.Build.Context, root))
			continue
		}
		df := dockerfilePath(s.Build)
		if !isFile(df) {
			errs = append(errs, fmt.Errorf("service %q: Dockerfile %s does not exist", name, rel(root, df)))
		}
	}
	return errs
}

// dockerfilePath resolves a build's Dockerfile the way the builder does:
// relative to the build context, "Dockerfile" when unset.
func dockerfilePath(b *types.BuildConfig) string {
	df := b.Dockerfile
	if df == "" {
		df = "Dockerfile"
	}
	if filepath.IsAbs(df) {
		return df
	}
	return filepath.Join(b.Context, df)
}

// checkBindMounts requires every bind-mounted host path to exist inside
// the repository: a stack that mounts files from the operator's machine
// is not reproducible from a checkout.
func checkBindMounts(p *types.Project, root string) []error {
	var errs []error
	for _, name := range serviceNames(p) {
		for _, v := range p.Services[name].Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			switch {
			case !within(root, v.Source):
				errs = append(errs, fmt.Errorf("service %q: bind mount source %s is outside the repository", name, v.Source))
			case !exists(v.Source):
				errs = append(errs, fmt.Errorf("service %q: bind mount source %s does not exist", name, rel(root, v.Source)))
			}
		}
	}
	return errs
}

// portKey identifies a host port binding; a binding on all interfaces
// has an empty ip and conflicts with a binding of the same port on any ip.
type portKey struct {
	ip    string
	port  int
	proto string
}

func (k portKey) conflicts(o portKey) bool {
	return k.port == o.port && k.proto == o.proto && (k.ip == "" || o.ip == "" || k.ip == o.ip)
}

func (k portKey) String() string {
	ip := k.ip
	if ip == "" {
		ip = "*"
	}
	return fmt.Sprintf("%s:%d/%s", ip, k.port, k.proto)
}

// checkPublishedPorts rejects two services (or two entries of one
// service) publishing the same host port: the second container would
// fail to start with "port is already allocated".
func checkPublishedPorts(p *types.Project) []error {
	type binding struct {
		key     portKey
		service string
	}
	var seen []binding
	var errs []error
	for _, name := range serviceNames(p) {
		for _, pc := range p.Services[name].Ports {
			keys, err := hostPorts(pc)
			if err != nil {
				errs = append(errs, fmt.Errorf("service %q: %w", name, err))
				continue
			}
			for _, k := range keys {
				for _, b := range seen {
					if b.key.conflicts(k) {
						errs = append(errs, fmt.Errorf("services %q and %q both publish host port %s", b.service, name, k))
					}
				}
				seen = append(seen, binding{key: k, service: name})
			}
		}
	}
	return errs
}

// hostPorts expands a port entry's published side ("8081" or
// "8000-8010") into host bindings; an unpublished port binds nothing.
func hostPorts(pc types.ServicePortConfig) ([]portKey, error) {
	if pc.Published == "" {
		return nil, nil
	}
	ip := pc.HostIP
	if ip == "0.0.0.0" || ip == "::" {
		ip = ""
	}
	proto := pc.Protocol
	if proto == "" {
		proto = "tcp"
	}
	lo, hi, isRange := strings.Cut(pc.Published, "-")
	if !isRange {
		hi = lo
	}
	first, err1 := strconv.Atoi(lo)
	last, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || first < 1 || last > 65535 || first > last {
		return nil, fmt.Errorf("published port %q is not a port or port range", pc.Published)
	}
	keys := make([]portKey, 0, last-first+1)
	for port := first; port <= last; port++ {
		keys = append(keys, portKey{ip: ip, port: port, proto: proto})
	}
	return keys, nil
}

// trawlerServices returns the names of services that run the Trawler
// image: built from the repository's root context, or using the image such
// a build produces.
func trawlerServices(p *types.Project, root string) []string {
	images := map[string]bool{}
	for _, s := range p.Services {
		if s.Build != nil && filepath.Clean(s.Build.Context) == root && s.Image != "" {
			images[s.Image] = true
		}
	}
	var names []string
	for _, name := range serviceNames(p) {
		s := p.Services[name]
		if (s.Build != nil && filepath.Clean(s.Build.Context) == root) || images[s.Image] {
			names = append(names, name)
		}
	}
	return names
}

// isJob reports whether a service is a one-shot job rather than a
// long-running role. Trawler services must say which by an explicit
// restart policy; "no" means a job.
func isJob(s types.ServiceConfig) bool {
	return s.Restart == types.RestartPolicyNo
}

// checkTrawlerServices requires each Trawler service to run as a non-root
// user and to state its restart policy (which tells a job from a role that
// must be monitored).
func checkTrawlerServices(p *types.Project, root string) []error {
	var errs []error
	names := trawlerServices(p, root)
	if len(names) == 0 {
		return []error{fmt.Errorf("no service is built from %s", filepath.Join(root, "Dockerfile"))}
	}
	for _, name := range names {
		s := p.Services[name]
		if err := nonRootUser(s.User); err != nil {
			errs = append(errs, fmt.Errorf("service %q: %w", name, err))
		}
		if s.Restart == "" {
			errs = append(errs, fmt.Errorf("service %q: no restart policy; set unless-stopped for a long-running role or \"no\" for a job", name))
		}
	}
	return errs
}

// nonRootUser accepts a compose `user:` value ("uid", "uid:gid", "name" or
// "name:group") unless it is empty or names root.
func nonRootUser(user string) error {
	if user == "" {
		return fmt.Errorf("user is not set; Trawler services must run as a non-root user (the image's is 10001:10001)")
	}
	u, _, _ := strings.Cut(user, ":")
	if u == "root" {
		return fmt.Errorf("user %q is root", user)
	}
	if uid, err := strconv.Atoi(u); err == nil && uid == 0 {
		return fmt.Errorf("user %q is uid 0 (root)", user)
	}
	return nil
}

// checkHealthGates requires every service that another waits for with
// condition service_healthy to define a healthcheck; compose refuses to
// start the dependant otherwise.
func checkHealthGates(p *types.Project) []error {
	var errs []error
	for _, name := range serviceNames(p) {
		deps := p.Services[name].DependsOn
		for _, target := range sortedKeys(deps) {
			if deps[target].Condition != types.ServiceConditionHealthy {
				continue
			}
			t, ok := p.Services[target]
			if ok && (t.HealthCheck == nil || t.HealthCheck.Disable || len(t.HealthCheck.Test) == 0) {
				errs = append(errs, fmt.Errorf("service %q waits for %q to be healthy, but %q has no healthcheck", name, target, target))
			}
		}
	}
	return errs
}

// adminPort returns the port a Trawler service serves /metrics on: from
// its TRAWLER_ADMIN_ADDR, else the Dockerfile's, else defaultAdminPort.
func adminPort(s types.ServiceConfig, dockerfileEnv map[string]string) (int, error) {
	addr, ok := dockerfileEnv["TRAWLER_ADMIN_ADDR"]
	if v, set := s.Environment["TRAWLER_ADMIN_ADDR"]; set && v != nil {
		addr, ok = *v, true
	}
	if !ok {
		return defaultAdminPort, nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("TRAWLER_ADMIN_ADDR %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("TRAWLER_ADMIN_ADDR %q: port is not a number in 1-65535", addr)
	}
	return n, nil
}

// ReadDockerfileEnv returns the variables a Dockerfile sets with ENV, in
// both the `ENV k=v k2=v2` and the legacy `ENV k v` forms, following line
// continuations. Quotes around values are removed; variable references
// are left as written.
func ReadDockerfileEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read Dockerfile: %w", err)
	}
	env := map[string]string{}
	joined := strings.ReplaceAll(string(data), "\\\n", " ")
	for i, line := range strings.Split(joined, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.EqualFold(fields[0], "ENV") {
			continue
		}
		args := fields[1:]
		if !strings.Contains(args[0], "=") {
			if len(args) < 2 {
				return nil, fmt.Errorf("%s: ENV instruction %d: %q has no value", path, i+1, args[0])
			}
			env[args[0]] = unquote(strings.Join(args[1:], " "))
			continue
		}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("%s: ENV instruction %d: %q is not KEY=VALUE", path, i+1, a)
			}
			env[k] = unquote(v)
		}
	}
	return env, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// within reports whether path lies inside (or is) dir; both are cleaned.
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// rel shortens path to be relative to root for messages, when it can.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && within(root, path) {
		return r
	}
	return path
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
