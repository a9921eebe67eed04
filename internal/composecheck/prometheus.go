package composecheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// PrometheusConfig is where the compose stack's Prometheus configuration
// lives, relative to the repository root.
const PrometheusConfig = "deploy/prometheus/prometheus.yml"

// promConfig is the part of Prometheus's configuration the stack uses. It
// is decoded strictly, so a misspelt key fails here instead of being
// ignored; a key Prometheus knows but this struct lacks must be added here
// before it can be used.
type promConfig struct {
	Global        map[string]any     `yaml:"global"`
	RuleFiles     []string           `yaml:"rule_files"`
	Alerting      map[string]any     `yaml:"alerting"`
	ScrapeConfigs []promScrapeConfig `yaml:"scrape_configs"`
}

type promScrapeConfig struct {
	JobName              string           `yaml:"job_name"`
	ScrapeInterval       string           `yaml:"scrape_interval"`
	ScrapeTimeout        string           `yaml:"scrape_timeout"`
	MetricsPath          string           `yaml:"metrics_path"`
	Scheme               string           `yaml:"scheme"`
	StaticConfigs        []promStatic     `yaml:"static_configs"`
	DNSSDConfigs         []promDNSSD      `yaml:"dns_sd_configs"`
	RelabelConfigs       []map[string]any `yaml:"relabel_configs"`
	MetricRelabelConfigs []map[string]any `yaml:"metric_relabel_configs"`
}

type promStatic struct {
	Targets []string          `yaml:"targets"`
	Labels  map[string]string `yaml:"labels"`
}

type promDNSSD struct {
	Names           []string `yaml:"names"`
	Type            string   `yaml:"type"`
	Port            int      `yaml:"port"`
	RefreshInterval string   `yaml:"refresh_interval"`
}

// promRules is a Prometheus rule file.
type promRules struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert         string            `yaml:"alert"`
			Record        string            `yaml:"record"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// scrapeTarget is one endpoint Prometheus scrapes: a host (a compose
// service name for targets on the compose network) and a port.
type scrapeTarget struct {
	host string
	port int
}

// decodeStrict decodes one YAML document into v, rejecting unknown keys
// and trailing documents. yaml's errors carry the line number.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("file is empty")
		}
		return err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document")
	}
	return nil
}

// parsePrometheusConfig parses a Prometheus configuration strictly and
// checks what the stack relies on: unique job names, each job with a
// target, static targets of the form host:port, DNS discovery with a
// record type and a port.
func parsePrometheusConfig(data []byte) (*promConfig, error) {
	var cfg promConfig
	if err := decodeStrict(data, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.ScrapeConfigs) == 0 {
		return nil, errors.New("no scrape_configs")
	}
	jobs := map[string]bool{}
	for i, sc := range cfg.ScrapeConfigs {
		if sc.JobName == "" {
			return nil, fmt.Errorf("scrape_configs[%d]: job_name is empty", i)
		}
		if jobs[sc.JobName] {
			return nil, fmt.Errorf("scrape_configs[%d]: job_name %q is used twice", i, sc.JobName)
		}
		jobs[sc.JobName] = true
		if _, err := sc.targets(); err != nil {
			return nil, fmt.Errorf("scrape_configs[%d] (job %q): %w", i, sc.JobName, err)
		}
	}
	return &cfg, nil
}

// targets lists the endpoints a scrape job reaches.
func (sc promScrapeConfig) targets() ([]scrapeTarget, error) {
	var out []scrapeTarget
	for _, st := range sc.StaticConfigs {
		for _, t := range st.Targets {
			host, port, err := net.SplitHostPort(t)
			if err != nil {
				return nil, fmt.Errorf("static target %q: %w", t, err)
			}
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("static target %q: port is not a number in 1-65535", t)
			}
			out = append(out, scrapeTarget{host: host, port: n})
		}
	}
	for _, d := range sc.DNSSDConfigs {
		switch d.Type {
		case "A", "AAAA":
			if d.Port < 1 || d.Port > 65535 {
				return nil, fmt.Errorf("dns_sd_config %v: type %s needs a port in 1-65535", d.Names, d.Type)
			}
		case "SRV":
		default:
			return nil, fmt.Errorf("dns_sd_config %v: type %q is not A, AAAA or SRV", d.Names, d.Type)
		}
		for _, n := range d.Names {
			out = append(out, scrapeTarget{host: n, port: d.Port})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no static targets and no DNS discovery")
	}
	return out, nil
}

// parseRuleFile parses a Prometheus rule file strictly and checks each
// rule is an alert or a recording rule with an expression.
func parseRuleFile(data []byte) error {
	var rules promRules
	if err := decodeStrict(data, &rules); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, g := range rules.Groups {
		if g.Name == "" || names[g.Name] {
			return fmt.Errorf("groups[%d]: group name %q is empty or used twice", i, g.Name)
		}
		names[g.Name] = true
		for j, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				return fmt.Errorf("group %q rule %d: set exactly one of alert and record", g.Name, j)
			}
			if r.Expr == "" {
				return fmt.Errorf("group %q rule %d: expr is empty", g.Name, j)
			}
		}
	}
	return nil
}

// checkPrometheus parses the stack's Prometheus configuration and its rule
// files, and requires every long-running Trawler service to be scraped on
// its admin port by its compose name, and every scraped host to be a
// compose service.
func checkPrometheus(p *types.Project, root string) []error {
	file := filepath.Join(root, PrometheusConfig)
	data, err := os.ReadFile(file)
	if err != nil {
		return []error{fmt.Errorf("read prometheus config: %w", err)}
	}
	cfg, err := parsePrometheusConfig(data)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", PrometheusConfig, err)}
	}
	service, inContainer, ok := mountedAt(p, file)
	if !ok {
		return []error{fmt.Errorf("%s: no service mounts it", PrometheusConfig)}
	}
	errs := checkRuleFiles(p.Services[service], path.Dir(inContainer), cfg.RuleFiles, root)
	return append(errs, checkScrapeCoverage(p, root, cfg)...)
}

// checkRuleFiles resolves each rule_files entry as Prometheus does
// (relative to the configuration file's directory, globs allowed) inside
// the Prometheus container, maps it to the host through the bind mounts,
// and parses what it finds.
func checkRuleFiles(prom types.ServiceConfig, configDir string, patterns []string, root string) []error {
	var errs []error
	for _, pat := range patterns {
		inContainer := pat
		if !path.IsAbs(pat) {
			inContainer = path.Join(configDir, pat)
		}
		host, ok := hostPathOf(prom, inContainer)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: rule file %s is not bind-mounted into service %q", PrometheusConfig, pat, prom.Name))
			continue
		}
		matches, err := filepath.Glob(host)
		if err != nil || len(matches) == 0 {
			errs = append(errs, fmt.Errorf("%s: rule file %s (%s on the host) does not exist", PrometheusConfig, pat, rel(root, host)))
			continue
		}
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err == nil {
				err = parseRuleFile(data)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rule file %s: %w", rel(root, m), err))
			}
		}
	}
	return errs
}

// checkScrapeCoverage compares the scrape targets with the compose
// services.
func checkScrapeCoverage(p *types.Project, root string, cfg *promConfig) []error {
	dfEnv, err := ReadDockerfileEnv(filepath.Join(root, "Dockerfile"))
	if err != nil {
		return []error{err}
	}
	scraped := map[scrapeTarget]string{}
	var errs []error
	for _, sc := range cfg.ScrapeConfigs {
		ts, _ := sc.targets() // validated by parsePrometheusConfig
		for _, t := range ts {
			scraped[t] = sc.JobName
			if _, ok := p.Services[t.host]; !ok && t.host != "localhost" && t.host != "127.0.0.1" {
				errs = append(errs, fmt.Errorf("%s: job %q scrapes %s:%d, but there is no compose service %q", PrometheusConfig, sc.JobName, t.host, t.port, t.host))
			}
		}
	}
	jobs := map[string]promScrapeConfig{}
	for _, sc := range cfg.ScrapeConfigs {
		jobs[sc.JobName] = sc
	}
	for _, name := range trawlerServices(p, root) {
		s := p.Services[name]
		if isJob(s) {
			continue
		}
		port, err := adminPort(s, dfEnv)
		if err != nil {
			errs = append(errs, fmt.Errorf("service %q: %w", name, err))
			continue
		}
		job, ok := scraped[scrapeTarget{host: name, port: port}]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: Trawler service %q is not scraped on its admin port (want target %s:%d)", PrometheusConfig, name, name, port))
			continue
		}
		if mp := jobs[job].MetricsPath; mp != "" && mp != "/metrics" {
			errs = append(errs, fmt.Errorf("%s: job %q scrapes %q at %s, but Trawler serves /metrics", PrometheusConfig, job, name, mp))
		}
	}
	return errs
}
