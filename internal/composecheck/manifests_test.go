package composecheck

import (
	"strings"
	"testing"
)

// podSpec returns a workload object's pod spec.
func podSpec(obj map[string]any) map[string]any {
	if obj["kind"] == "CronJob" {
		return dig(obj, "spec", "jobTemplate", "spec", "template", "spec").(map[string]any)
	}
	return dig(obj, "spec", "template", "spec").(map[string]any)
}

func firstContainer(obj map[string]any) map[string]any {
	return podSpec(obj)["containers"].([]any)[0].(map[string]any)
}

// TestBrokenManifests breaks one rendered object of the real chart at a
// time; CheckManifests must name the object and the fault.
func TestBrokenManifests(t *testing.T) {
	const (
		npld = "Deployment/trawler-worker-npld"
		cdx  = "StatefulSet/trawler-cdxwriter"
		svc  = "Service/trawler-cdxwriter"
		cron = "CronJob/trawler-launcher-npld"
	)
	tests := []struct {
		name    string
		target  string // kind/name of the object to break
		breakIt func(obj map[string]any) map[string]any
		want    string
	}{
		{"selector does not match pods", npld, func(o map[string]any) map[string]any {
			dig(o, "spec", "selector", "matchLabels").(map[string]any)["trawler.stream"] = "bypm"
			return nil
		}, npld + ": selector map["},
		{"selectors overlap", npld, func(o map[string]any) map[string]any {
			delete(dig(o, "spec", "selector", "matchLabels").(map[string]any), "trawler.stream")
			return nil
		}, npld + ": selector also matches the pods of Deployment/trawler-worker-bypm"},
		{"mount without volume", cdx, func(o map[string]any) map[string]any {
			podSpec(o)["volumes"].([]any)[0].(map[string]any)["name"] = "scratch"
			return nil
		}, cdx + ` container cdxwriter: volumeMount "tmp" names no volume`},
		{"literal password", cron, func(o map[string]any) map[string]any {
			c := firstContainer(o)
			c["env"] = append(c["env"].([]any), map[string]any{"name": "TRAWLER_REDIS_PASSWORD", "value": "hunter2"})
			return nil
		}, cron + " container launcher: TRAWLER_REDIS_PASSWORD must come from a Secret"},
		{"runAsNonRoot missing", cron, func(o map[string]any) map[string]any {
			delete(podSpec(o)["securityContext"].(map[string]any), "runAsNonRoot")
			return nil
		}, cron + " container launcher: runAsNonRoot is not set"},
		{"runAsUser 0", npld, func(o map[string]any) map[string]any {
			podSpec(o)["securityContext"].(map[string]any)["runAsUser"] = 0
			return nil
		}, npld + ": pod securityContext.runAsUser is 0"},
		{"writable root filesystem", cdx, func(o map[string]any) map[string]any {
			firstContainer(o)["securityContext"].(map[string]any)["readOnlyRootFilesystem"] = false
			return nil
		}, cdx + " container cdxwriter: readOnlyRootFilesystem is not true"},
		{"privilege escalation allowed", npld, func(o map[string]any) map[string]any {
			delete(firstContainer(o)["securityContext"].(map[string]any), "allowPrivilegeEscalation")
			return nil
		}, npld + " container worker: allowPrivilegeEscalation is not false"},
		{"liveness on wrong path", npld, func(o map[string]any) map[string]any {
			dig(firstContainer(o), "livenessProbe", "httpGet").(map[string]any)["path"] = "/metrics"
			return nil
		}, npld + ` container worker: livenessProbe.httpGet.path is "/metrics", want "/healthz"`},
		{"readiness missing", cdx, func(o map[string]any) map[string]any {
			delete(firstContainer(o), "readinessProbe")
			return nil
		}, cdx + ` container cdxwriter: readinessProbe.httpGet.path is "", want "/readyz"`},
		{"probe on undeclared port", npld, func(o map[string]any) map[string]any {
			dig(firstContainer(o), "readinessProbe", "httpGet").(map[string]any)["port"] = "http"
			return nil
		}, npld + " container worker: readinessProbe port http is not one of the container's ports"},
		{"no scrape annotation", cdx, func(o map[string]any) map[string]any {
			delete(dig(o, "spec", "template", "metadata", "annotations").(map[string]any), "prometheus.io/scrape")
			return nil
		}, cdx + `: pod annotation prometheus.io/scrape is not "true"`},
		{"scrape port not declared", npld, func(o map[string]any) map[string]any {
			dig(o, "spec", "template", "metadata", "annotations").(map[string]any)["prometheus.io/port"] = "9200"
			return nil
		}, npld + ": prometheus.io/port 9200 is not a container port"},
		{"service selects nothing", svc, func(o map[string]any) map[string]any {
			dig(o, "spec", "selector").(map[string]any)["app.kubernetes.io/component"] = "cdx"
			return nil
		}, svc + ": selector map["},
		{"service targets undeclared port", svc, func(o map[string]any) map[string]any {
			dig(o, "spec", "ports").([]any)[0].(map[string]any)["targetPort"] = "grpc"
			return nil
		}, svc + ": targetPort grpc is not declared by the pods of StatefulSet/trawler-cdxwriter"},
		{"statefulset without headless service", cdx, func(o map[string]any) map[string]any {
			dig(o, "spec").(map[string]any)["serviceName"] = "trawler-cdxwriter"
			return nil
		}, cdx + `: serviceName "trawler-cdxwriter" is not a headless Service`},
		{"object rendered twice", svc, func(o map[string]any) map[string]any {
			return o
		}, "Service/trawler-cdxwriter is rendered twice"},
		{"name not a DNS label", cron, func(o map[string]any) map[string]any {
			dig(o, "metadata").(map[string]any)["name"] = "Trawler_Launcher"
			return nil
		}, `CronJob/Trawler_Launcher: name "Trawler_Launcher" is not a lowercase RFC 1123 label`},
		{"cronjob name too long", cron, func(o map[string]any) map[string]any {
			dig(o, "metadata").(map[string]any)["name"] = strings.Repeat("l", 53)
			return nil
		}, "is longer than 52 characters"},
		{"no containers", cron, func(o map[string]any) map[string]any {
			podSpec(o)["containers"] = []any{}
			return nil
		}, cron + ": no containers"},
		{"no kind", svc, func(o map[string]any) map[string]any {
			delete(o, "kind")
			return nil
		}, "templates/cdxwriter-service.yaml: object without kind or metadata.name"},
	}
	c := loadChart(t, chartDir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := c.Render("trawler", "crawl", withRequired(withCronLauncher(nil)))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for i, m := range ms {
				if kind, name := m.Kind(); kind+"/"+name != tt.target {
					continue
				}
				found = true
				if extra := tt.breakIt(m.Object); extra != nil {
					ms = append(ms, Manifest{Template: ms[i].Template, Object: extra})
				}
				break
			}
			if !found {
				t.Fatalf("chart renders no %s", tt.target)
			}
			errs := CheckManifests(ms)
			for _, err := range errs {
				if strings.Contains(err.Error(), tt.want) {
					return
				}
			}
			t.Errorf("no error contains %q; got %v", tt.want, errs)
		})
	}
}

// A *_FILE variable is the path of a mounted Secret: a literal is right;
// the secret itself must still come from a Secret.
func TestSecretFileVariables(t *testing.T) {
	c := map[string]any{"env": []any{
		map[string]any{"name": "TRAWLER_ADMIN_TOKEN_FILE", "value": "/etc/trawler-admin/token"},
		map[string]any{"name": "TRAWLER_ADMIN_TOKEN", "value": "s3cret"},
	}}
	errs := checkContainerEnv("c", c)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "TRAWLER_ADMIN_TOKEN must come from a Secret") {
		t.Errorf("errors %v, want one for TRAWLER_ADMIN_TOKEN only", errs)
	}
}
