package composecheck

// The chart's optional roles: renderers and the provenance role.

import (
	"fmt"
	"strings"
	"testing"
)

// withRenderer is an override turning the renderer on, with more settings
// merged over it.
func withRenderer(renderer map[string]any) map[string]any {
	r := map[string]any{"enabled": true}
	for k, v := range renderer {
		r[k] = v
	}
	return map[string]any{"renderer": r}
}

func TestChartRenderer(t *testing.T) {
	c := loadChart(t, chartDir)
	for _, m := range render(t, c, nil) {
		if kind, name := m.Kind(); strings.Contains(name, "renderer") {
			t.Errorf("renderer is off by default, but %s %s is rendered", kind, name)
		}
	}

	over := withRenderer(nil)
	over["worker"] = map[string]any{"persistence": map[string]any{"existingClaim": "warcs"}}
	ms := render(t, c, over)
	deps := find(ms, "Deployment")
	for _, stream := range []string{"npld", "bypm"} {
		name := "trawler-renderer-" + stream
		d := deps[name]
		if d == nil {
			t.Fatalf("no Deployment %s; have %v", name, sortedKeys(deps))
		}
		if dig(d, "spec", "replicas") != 1 {
			t.Errorf("%s replicas = %v, want 1", name, dig(d, "spec", "replicas"))
		}
		rc := container(t, d, "spec", "template")
		if rc["image"] != "ghcr.io/trawler-crawl/trawler-renderer:0.1.0" {
			t.Errorf("%s image = %v, want the renderer image at the chart's appVersion", name, rc["image"])
		}
		if !equalStrings(rc["args"], "renderer") {
			t.Errorf("%s args = %v", name, rc["args"])
		}
		env := envOf(rc)
		for k, want := range map[string]string{
			"TRAWLER_STREAM": stream, "TRAWLER_CRAWL": "fc", "TRAWLER_DATA": "/data", "TRAWLER_CLAMD_ADDR": "clamav:3310",
			"TRAWLER_TABS": "2", "TRAWLER_PAGE_TIMEOUT": "60s", "TRAWLER_ATTEMPTS": "2", "TRAWLER_NO_SANDBOX": "true",
			"TRAWLER_PROFILE": "/etc/trawler/profile.yaml", "TRAWLER_SET": "warc.prefix=" + strings.ToUpper(stream), "HOME": "/tmp",
		} {
			if env[k] != want {
				t.Errorf("%s %s = %v, want %q", name, k, env[k], want)
			}
		}
		// Renderers take leased slots (r0, r1, ...), as workers do: a
		// pod's name would change with every replacement pod and leave
		// its open WARCs to nobody.
		if _, ok := env["TRAWLER_RENDERER_ID"]; ok {
			t.Errorf("%s sets TRAWLER_RENDERER_ID = %v; renderers lease their identity", name, env["TRAWLER_RENDERER_ID"])
		}
		for _, k := range []string{"TRAWLER_API_ADDR", "TRAWLER_API_TOKEN_FILE"} {
			if _, ok := env[k]; ok {
				t.Errorf("%s sets %s with the API off", name, k)
			}
		}
		if lim := dig(rc, "resources", "limits"); dig(lim, "cpu") != "2" || dig(lim, "memory") != "2Gi" {
			t.Errorf("%s limits = %v, want 2 CPU / 2Gi", name, lim)
		}
		// The workers' claim and directory, so the WARCs land beside theirs.
		w := deps["trawler-worker-"+stream]
		wc := container(t, w, "spec", "template")
		if got, want := dig(rc["volumeMounts"].([]any)[0], "subPath"), dig(wc["volumeMounts"].([]any)[0], "subPath"); got != want {
			t.Errorf("%s data subPath = %v, want the workers' %v", name, got, want)
		}
		vols, _ := dig(d, "spec", "template", "spec", "volumes").([]any)
		if len(vols) == 0 || dig(vols[0], "persistentVolumeClaim", "claimName") != "warcs" {
			t.Errorf("%s volumes = %v, want the workers' warcs claim first", name, vols)
		}
		if dig(d, "spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
			t.Errorf("%s does not run as non-root", name)
		}
		if dig(d, "spec", "template", "metadata", "labels", "trawler.metrics") != "true" {
			t.Errorf("%s pods are not selected by the metrics Service", name)
		}
	}

	// The renderers' egress is the workers'.
	nps := find(ms, "NetworkPolicy")
	wp, rp := nps["trawler-worker-egress"], nps["trawler-renderer-egress"]
	if wp == nil || rp == nil {
		t.Fatalf("NetworkPolicies = %v, want worker and renderer egress", sortedKeys(nps))
	}
	if fmt.Sprint(dig(wp, "spec", "egress")) != fmt.Sprint(dig(rp, "spec", "egress")) {
		t.Errorf("renderer egress %v differs from the workers' %v", dig(rp, "spec", "egress"), dig(wp, "spec", "egress"))
	}
	if dig(rp, "spec", "podSelector", "matchLabels", "app.kubernetes.io/component") != "renderer" {
		t.Errorf("renderer NetworkPolicy selects %v", dig(rp, "spec", "podSelector"))
	}
	pdbs := find(ms, "PodDisruptionBudget")
	if pdbs["trawler-renderer-npld"] == nil || pdbs["trawler-renderer-bypm"] == nil {
		t.Errorf("PodDisruptionBudgets = %v, want one per stream's renderers", sortedKeys(pdbs))
	}
	if svcs := find(ms, "Service"); svcs["trawler-renderer-npld"] != nil {
		t.Error("renderer API Service rendered with the API off")
	}

	// Settings, and the API with adminToken's Secret.
	over = withRenderer(map[string]any{"replicas": 3, "tabs": 4, "pageTimeout": "2m", "extraArgs": []any{"--log-level=debug"},
		"image": map[string]any{"repository": "registry.example/renderer", "tag": "v9"}, "api": map[string]any{"enabled": true}})
	over["adminToken"] = map[string]any{"existingSecret": "trawler-admin", "key": "tok"}
	over["crawl"] = "dc"
	over["streams"] = []any{map[string]any{"name": "main", "workers": 1, "feeds": []any{}}}
	ms = render(t, c, over)
	d := find(ms, "Deployment")["trawler-renderer-main"]
	if d == nil || dig(d, "spec", "replicas") != 3 {
		t.Fatalf("renderer-main Deployment = %v", d)
	}
	rc := container(t, d, "spec", "template")
	if rc["image"] != "registry.example/renderer:v9" || !equalStrings(rc["args"], "renderer", "--log-level=debug") {
		t.Errorf("renderer image %v args %v", rc["image"], rc["args"])
	}
	env := envOf(rc)
	if _, ok := env["TRAWLER_STREAM"]; ok {
		t.Error("domain crawl renderer sets TRAWLER_STREAM")
	}
	if env["TRAWLER_TABS"] != "4" || env["TRAWLER_PAGE_TIMEOUT"] != "2m" || env["TRAWLER_API_ADDR"] != ":8090" ||
		env["TRAWLER_API_TOKEN_FILE"] != "/etc/trawler-render-api/tok" {
		t.Errorf("renderer env = %v", env)
	}
	var secret any
	for _, v := range dig(d, "spec", "template", "spec", "volumes").([]any) {
		if dig(v, "name") == "render-api-token" {
			secret = dig(v, "secret", "secretName")
		}
	}
	if secret != "trawler-admin" {
		t.Errorf("render API token Secret = %v, want adminToken's trawler-admin", secret)
	}
	svc := find(ms, "Service")["trawler-renderer-main"]
	if ports, _ := dig(svc, "spec", "ports").([]any); len(ports) != 1 || dig(ports[0], "port") != 8090 {
		t.Errorf("renderer API Service ports = %v", dig(svc, "spec", "ports"))
	}

	// The API without any token Secret is refused at render time.
	_, err := c.Render("trawler", "crawl", withRequired(withRenderer(map[string]any{"api": map[string]any{"enabled": true}})))
	if err == nil || !strings.Contains(err.Error(), "renderer.api.enabled needs") {
		t.Errorf("API without a Secret: error = %v", err)
	}
}

// withProvenance turns the provenance role on over the workers' shared
// claim, with more settings merged over it.
func withProvenance(provenance map[string]any) map[string]any {
	p := map[string]any{"enabled": true}
	for k, v := range provenance {
		p[k] = v
	}
	return map[string]any{"provenance": p, "worker": map[string]any{"persistence": map[string]any{"existingClaim": "warcs"}}}
}

func TestChartProvenance(t *testing.T) {
	c := loadChart(t, chartDir)
	for _, m := range render(t, c, nil) {
		if kind, name := m.Kind(); strings.Contains(name, "provenance") {
			t.Errorf("provenance is off by default, but %s %s is rendered", kind, name)
		}
	}
	// Without the workers' shared claim there is nothing to read: refused.
	if _, err := c.Render("trawler", "crawl", withRequired(map[string]any{"provenance": map[string]any{"enabled": true},
		"worker": map[string]any{"persistence": map[string]any{"emptyDir": true}}})); err == nil ||
		!strings.Contains(err.Error(), "provenance.enabled needs the workers' shared claim, not worker.persistence.emptyDir") {
		t.Errorf("provenance without a claim: error = %v", err)
	}

	ms := render(t, c, withProvenance(nil))
	deps := find(ms, "Deployment")
	d := deps["trawler-provenance"]
	if d == nil {
		t.Fatalf("no Deployment trawler-provenance; have %v", sortedKeys(deps))
	}
	if dig(d, "spec", "replicas") != 1 || dig(d, "spec", "strategy", "type") != "Recreate" {
		t.Errorf("provenance replicas %v strategy %v, want 1 and Recreate", dig(d, "spec", "replicas"), dig(d, "spec", "strategy"))
	}
	pc := container(t, d, "spec", "template")
	env := envOf(pc)
	for k, want := range map[string]string{
		"TRAWLER_CRAWL": "fc", "TRAWLER_STREAM": "npld", "TRAWLER_DATA": "/data", "TRAWLER_KAFKA": "kafka:9092",
		"TRAWLER_PROFILE": "/etc/trawler/profile.yaml", "TRAWLER_SET": "warc.prefix=NPLD", "TRAWLER_HOSTNAME": "trawler-provenance",
	} {
		if env[k] != want {
			t.Errorf("provenance %s = %v, want %q", k, env[k], want)
		}
	}
	if _, ok := env["TRAWLER_CRAWL_LOG_DIR"]; ok {
		t.Error("TRAWLER_CRAWL_LOG_DIR holds one directory; the chart must pass --crawl-log-dir flags")
	}
	args, _ := pc["args"].([]any)
	if len(args) == 0 || args[0] != "provenance" {
		t.Fatalf("provenance args = %v", args)
	}
	dirs := map[string]bool{}
	for _, a := range args[1:] {
		if s, ok := strings.CutPrefix(a.(string), "--crawl-log-dir="); ok {
			dirs[s] = true
		} else {
			t.Errorf("provenance arg %v without watched or extraArgs", a)
		}
	}
	for _, want := range []string{"/data/logs/fc-npld/w0", "/data/logs/fc-npld/w15", "/streams/bypm/logs/fc-bypm/w0", "/streams/bypm/logs/fc-bypm/w15"} {
		if !dirs[want] {
			t.Errorf("provenance does not read %s", want)
		}
	}
	if len(dirs) != 32 || dirs["/data/logs/fc-npld/w16"] || dirs["/data/logs/fc-npld-render-r0"] {
		t.Errorf("provenance reads %d crawl.log directories, want 16 slots of 2 streams and no renderer: %v", len(dirs), sortedKeys(dirs))
	}
	// The workers' claim: the first stream's directory at /data as its
	// workers mount it, writable; the others read-only.
	mounts := map[string]any{}
	for _, m := range pc["volumeMounts"].([]any) {
		mounts[dig(m, "mountPath").(string)] = m
	}
	wc := container(t, deps["trawler-worker-npld"], "spec", "template")
	if m := mounts["/data"]; dig(m, "name") != "data" || dig(m, "subPath") != dig(wc["volumeMounts"].([]any)[0], "subPath") || dig(m, "readOnly") == true {
		t.Errorf("provenance /data mount = %v, want the npld workers' fc/npld, writable", m)
	}
	if m := mounts["/streams/bypm"]; dig(m, "name") != "data" || dig(m, "subPath") != "fc/bypm" || dig(m, "readOnly") != true {
		t.Errorf("provenance /streams/bypm mount = %v, want fc/bypm read-only", m)
	}
	if m := mounts["/etc/trawler"]; dig(m, "readOnly") != true {
		t.Errorf("provenance profile mount = %v", m)
	}
	vols := map[string]any{}
	for _, v := range dig(d, "spec", "template", "spec", "volumes").([]any) {
		vols[dig(v, "name").(string)] = v
	}
	if dig(vols["data"], "persistentVolumeClaim", "claimName") != "warcs" {
		t.Errorf("provenance data volume = %v, want the workers' warcs claim", vols["data"])
	}
	if dig(vols["profile"], "configMap", "name") != "trawler-profile-npld" {
		t.Errorf("provenance profile volume = %v, want the npld stream's ConfigMap", vols["profile"])
	}
	if dig(d, "spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
		t.Error("provenance does not run as non-root")
	}
	if dig(d, "spec", "template", "metadata", "labels", "trawler.metrics") != "true" {
		t.Error("provenance pods are not selected by the metrics Service")
	}
	if lim := dig(pc, "resources", "limits", "memory"); lim == nil {
		t.Error("provenance has no memory limit")
	}
	// One replica: no PDB (as the cdxwriter); it fetches nothing from the
	// web: no egress policy.
	for _, kind := range []string{"PodDisruptionBudget", "NetworkPolicy"} {
		for name := range find(ms, kind) {
			if strings.Contains(name, "provenance") {
				t.Errorf("%s %s rendered for the single provenance pod", kind, name)
			}
		}
	}

	// With the renderer, the document finder and the domain crawl.
	over := withProvenance(map[string]any{"slots": 2, "watched": "/watched/w.jsonl", "extraArgs": []any{"--settle=2m"}})
	over["renderer"] = map[string]any{"enabled": true}
	ms = render(t, c, over)
	pc = container(t, find(ms, "Deployment")["trawler-provenance"], "spec", "template")
	want := []string{"provenance",
		"--crawl-log-dir=/data/logs/fc-npld/w0", "--crawl-log-dir=/data/logs/fc-npld/w1",
		"--crawl-log-dir=/data/logs/fc-npld-render-r0", "--crawl-log-dir=/data/logs/fc-npld-render-r1",
		"--doc-warc-dir=/data/warcs/fc-npld", "--doc-warc-dir=/data/warcs/fc-npld-render",
		"--crawl-log-dir=/streams/bypm/logs/fc-bypm/w0", "--crawl-log-dir=/streams/bypm/logs/fc-bypm/w1",
		"--crawl-log-dir=/streams/bypm/logs/fc-bypm-render-r0", "--crawl-log-dir=/streams/bypm/logs/fc-bypm-render-r1",
		"--doc-warc-dir=/streams/bypm/warcs/fc-bypm", "--doc-warc-dir=/streams/bypm/warcs/fc-bypm-render",
		"--watched=/watched/w.jsonl", "--settle=2m"}
	if !equalStrings(pc["args"], want...) {
		t.Errorf("provenance args = %v, want %v", pc["args"], want)
	}

	over = withProvenance(nil)
	over["crawl"] = "dc"
	over["streams"] = []any{map[string]any{"name": "main", "workers": 1, "feeds": []any{}}}
	ms = render(t, c, over)
	pc = container(t, find(ms, "Deployment")["trawler-provenance"], "spec", "template")
	if _, ok := envOf(pc)["TRAWLER_STREAM"]; ok {
		t.Error("domain crawl provenance sets TRAWLER_STREAM")
	}
	if args, _ := pc["args"].([]any); len(args) != 17 || args[1] != "--crawl-log-dir=/data/logs/dc/w0" {
		t.Errorf("domain crawl provenance args = %v", args)
	}
	if m := pc["volumeMounts"].([]any)[0]; dig(m, "subPath") != "dc/main" || dig(m, "mountPath") != "/data" {
		t.Errorf("domain crawl provenance data mount = %v", m)
	}
	// enabled: auto, the default: on for the domain crawl with the chart's
	// own claim, off (and no error) when its workers have no claim.
	dc := map[string]any{"crawl": "dc", "streams": []any{map[string]any{"name": "main", "workers": 1, "feeds": []any{}}}}
	d = find(render(t, c, dc), "Deployment")["trawler-provenance"]
	if d == nil {
		t.Fatal("the domain crawl's provenance is not on by default")
	}
	if vols, _ := dig(d, "spec", "template", "spec", "volumes").([]any); len(vols) == 0 || dig(vols[0], "persistentVolumeClaim", "claimName") != "trawler-warcs" {
		t.Errorf("domain crawl provenance volumes = %v, want the chart's trawler-warcs claim", dig(d, "spec", "template", "spec", "volumes"))
	}
	dc["worker"] = map[string]any{"persistence": map[string]any{"emptyDir": true}}
	if d := find(render(t, c, dc), "Deployment")["trawler-provenance"]; d != nil {
		t.Error("auto provenance rendered for workers without a shared claim")
	}
	dc["provenance"] = map[string]any{"enabled": false}
	delete(dc, "worker")
	if d := find(render(t, c, dc), "Deployment")["trawler-provenance"]; d != nil {
		t.Error("provenance.enabled false rendered the role for the domain crawl")
	}
}
