package composecheck

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// dnsLabel is an RFC 1123 label, which Service names and (with the
// StatefulSet pod ordinal added) pod hostnames must be.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// secretish matches environment variable names whose value must come from
// a Secret, never from a literal in a manifest.
var secretish = regexp.MustCompile(`(?i)PASSWORD|SECRET|TOKEN|CREDENTIAL|API_?KEY`)

// workload is a rendered object that runs pods.
type workload struct {
	kind, name  string
	longRunning bool           // probes and scrape annotations apply
	selector    map[string]any // nil for Jobs and CronJobs
	pod         map[string]any // the pod template
	claims      []any          // StatefulSet volumeClaimTemplates
	serviceName string         // StatefulSet governing Service
}

// podLabels returns the pod template's labels.
func (w workload) podLabels() map[string]any {
	m, _ := dig(w.pod, "metadata", "labels").(map[string]any)
	return m
}

// asWorkload extracts the pod template of objects that have one.
func asWorkload(m Manifest) (workload, bool) {
	kind, name := m.Kind()
	w := workload{kind: kind, name: name}
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		w.longRunning = true
		w.selector, _ = dig(m.Object, "spec", "selector", "matchLabels").(map[string]any)
		w.pod, _ = dig(m.Object, "spec", "template").(map[string]any)
		w.claims, _ = dig(m.Object, "spec", "volumeClaimTemplates").([]any)
		w.serviceName, _ = dig(m.Object, "spec", "serviceName").(string)
	case "Job":
		w.pod, _ = dig(m.Object, "spec", "template").(map[string]any)
	case "CronJob":
		w.pod, _ = dig(m.Object, "spec", "jobTemplate", "spec", "template").(map[string]any)
	default:
		return w, false
	}
	return w, true
}

// CheckManifests applies to rendered objects the rules Kubernetes would
// only enforce at apply or run time, and the project's own: names are
// valid and unique; selectors match their pod labels and no two workloads
// select each other's pods; every volume mount names a volume; pods run as
// non-root with read-only root filesystems and no privilege escalation;
// secret-looking variables come from Secrets; long-running pods have
// /healthz and /readyz probes on a declared port and Prometheus scrape
// annotations; Services select some pods and target ports those pods
// declare. It returns one error per broken rule.
func CheckManifests(ms []Manifest) []error {
	var errs []error
	var ws []workload
	seen := map[string]bool{}
	for _, m := range ms {
		kind, name := m.Kind()
		id := kind + "/" + name
		if kind == "" || name == "" {
			errs = append(errs, fmt.Errorf("%s: object without kind or metadata.name", m.Template))
			continue
		}
		if seen[id] {
			errs = append(errs, fmt.Errorf("%s: %s is rendered twice", m.Template, id))
		}
		seen[id] = true
		if !dnsLabel.MatchString(name) {
			errs = append(errs, fmt.Errorf("%s: name %q is not a lowercase RFC 1123 label of at most 63 characters", id, name))
		}
		// The CronJob controller names Jobs <name>-<11 characters>.
		if kind == "CronJob" && len(name) > 52 {
			errs = append(errs, fmt.Errorf("%s: name is longer than 52 characters, too long for its Jobs' names", id))
		}
		if w, ok := asWorkload(m); ok {
			ws = append(ws, w)
			errs = append(errs, checkWorkload(w)...)
		}
	}
	errs = append(errs, checkSelectorOverlap(ws)...)
	for _, m := range ms {
		if kind, _ := m.Kind(); kind == "Service" {
			errs = append(errs, checkService(m, ws)...)
		}
	}
	return append(errs, checkGoverningServices(ms, ws)...)
}

func checkWorkload(w workload) []error {
	id := w.kind + "/" + w.name
	if w.pod == nil {
		return []error{fmt.Errorf("%s: no pod template", id)}
	}
	var errs []error
	if w.selector != nil || w.longRunning {
		if len(w.selector) == 0 || !labelsMatch(w.selector, w.podLabels()) {
			errs = append(errs, fmt.Errorf("%s: selector %v does not match pod labels %v", id, w.selector, w.podLabels()))
		}
	}
	spec, _ := w.pod["spec"].(map[string]any)
	errs = append(errs, checkPodSecurity(id, spec)...)
	errs = append(errs, checkMounts(id, spec, w.claims)...)
	containers, _ := spec["containers"].([]any)
	if len(containers) == 0 {
		errs = append(errs, fmt.Errorf("%s: no containers", id))
	}
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		cid := fmt.Sprintf("%s container %v", id, cm["name"])
		errs = append(errs, checkContainerEnv(cid, cm)...)
		if w.longRunning {
			errs = append(errs, checkProbes(cid, cm)...)
		}
	}
	if w.longRunning {
		errs = append(errs, checkScrapeAnnotations(id, w.pod, containers)...)
	}
	return errs
}

// labelsMatch reports whether every selector label is on the object.
func labelsMatch(selector, labels map[string]any) bool {
	for k, v := range selector {
		if fmt.Sprint(labels[k]) != fmt.Sprint(v) || labels[k] == nil {
			return false
		}
	}
	return true
}

// checkSelectorOverlap rejects a workload whose selector also matches
// another workload's pods: their controllers would fight over the pods.
func checkSelectorOverlap(ws []workload) []error {
	var errs []error
	for _, a := range ws {
		for _, b := range ws {
			if a.name == b.name && a.kind == b.kind || len(a.selector) == 0 {
				continue
			}
			if labelsMatch(a.selector, b.podLabels()) {
				errs = append(errs, fmt.Errorf("%s/%s: selector also matches the pods of %s/%s", a.kind, a.name, b.kind, b.name))
			}
		}
	}
	return errs
}

// checkPodSecurity requires runAsNonRoot (on the pod or on every
// container) and, on every container, a read-only root filesystem and no
// privilege escalation.
func checkPodSecurity(id string, spec map[string]any) []error {
	var errs []error
	podNonRoot := dig(spec, "securityContext", "runAsNonRoot") == true
	if uid, ok := dig(spec, "securityContext", "runAsUser").(int); ok && uid == 0 {
		errs = append(errs, fmt.Errorf("%s: pod securityContext.runAsUser is 0", id))
	}
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		sc, _ := dig(c, "securityContext").(map[string]any)
		name := dig(c, "name")
		if !podNonRoot && sc["runAsNonRoot"] != true {
			errs = append(errs, fmt.Errorf("%s container %v: runAsNonRoot is not set on the pod or the container", id, name))
		}
		if sc["readOnlyRootFilesystem"] != true {
			errs = append(errs, fmt.Errorf("%s container %v: readOnlyRootFilesystem is not true", id, name))
		}
		if sc["allowPrivilegeEscalation"] != false {
			errs = append(errs, fmt.Errorf("%s container %v: allowPrivilegeEscalation is not false", id, name))
		}
	}
	return errs
}

// checkMounts requires every container volumeMount to name a pod volume
// or a StatefulSet volume claim template.
func checkMounts(id string, spec map[string]any, claims []any) []error {
	declared := map[string]bool{}
	vols, _ := spec["volumes"].([]any)
	for _, v := range slices.Concat(vols, claims) {
		n, _ := dig(v, "name").(string)
		if n == "" {
			n, _ = dig(v, "metadata", "name").(string)
		}
		declared[n] = true
	}
	var errs []error
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		mounts, _ := dig(c, "volumeMounts").([]any)
		for _, mt := range mounts {
			if n, _ := dig(mt, "name").(string); !declared[n] {
				errs = append(errs, fmt.Errorf("%s container %v: volumeMount %q names no volume", id, dig(c, "name"), n))
			}
		}
	}
	return errs
}

// checkContainerEnv rejects literal values for secret-looking variables.
// A *_FILE variable names the path of a mounted Secret, not the secret
// itself, so a literal is right for it.
func checkContainerEnv(cid string, c map[string]any) []error {
	var errs []error
	env, _ := c["env"].([]any)
	for _, e := range env {
		name, _ := dig(e, "name").(string)
		if !secretish.MatchString(name) || strings.HasSuffix(strings.ToUpper(name), "_FILE") {
			continue
		}
		if dig(e, "value") != nil || dig(e, "valueFrom", "secretKeyRef") == nil {
			errs = append(errs, fmt.Errorf("%s: %s must come from a Secret (valueFrom.secretKeyRef), not a literal value", cid, name))
		}
	}
	return errs
}

// checkProbes requires a liveness probe on /healthz and a readiness probe
// on /readyz, each on a port the container declares.
func checkProbes(cid string, c map[string]any) []error {
	var errs []error
	for _, pw := range [][2]string{{"livenessProbe", "/healthz"}, {"readinessProbe", "/readyz"}} {
		probe, want := pw[0], pw[1]
		path, _ := dig(c, probe, "httpGet", "path").(string)
		if path != want {
			errs = append(errs, fmt.Errorf("%s: %s.httpGet.path is %q, want %q", cid, probe, path, want))
			continue
		}
		if port := dig(c, probe, "httpGet", "port"); !declaresPort(c, port) {
			errs = append(errs, fmt.Errorf("%s: %s port %v is not one of the container's ports", cid, probe, port))
		}
	}
	return errs
}

// declaresPort reports whether a container declares port, given by name
// or number.
func declaresPort(c map[string]any, port any) bool {
	ports, _ := dig(c, "ports").([]any)
	for _, p := range ports {
		name, num := dig(p, "name"), dig(p, "containerPort")
		if port != nil && (fmt.Sprint(port) == fmt.Sprint(name) || fmt.Sprint(port) == fmt.Sprint(num)) {
			return true
		}
	}
	return false
}

// checkScrapeAnnotations requires the pod annotations Prometheus's
// kubernetes-pods discovery uses, naming a declared container port.
func checkScrapeAnnotations(id string, pod map[string]any, containers []any) []error {
	ann, _ := dig(pod, "metadata", "annotations").(map[string]any)
	if ann["prometheus.io/scrape"] != "true" {
		return []error{fmt.Errorf("%s: pod annotation prometheus.io/scrape is not \"true\"", id)}
	}
	port, _ := ann["prometheus.io/port"].(string)
	n, err := strconv.Atoi(port)
	if err != nil {
		return []error{fmt.Errorf("%s: pod annotation prometheus.io/port %q is not a quoted port number", id, port)}
	}
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if declaresPort(cm, n) {
			return nil
		}
	}
	return []error{fmt.Errorf("%s: prometheus.io/port %d is not a container port", id, n)}
}

// checkService requires a Service to select the pods of some workload and
// every targetPort to be a port those pods declare.
func checkService(m Manifest, ws []workload) []error {
	_, name := m.Kind()
	id := "Service/" + name
	sel, _ := dig(m.Object, "spec", "selector").(map[string]any)
	if len(sel) == 0 {
		return []error{fmt.Errorf("%s: no selector", id)}
	}
	var target *workload
	for i := range ws {
		if labelsMatch(sel, ws[i].podLabels()) {
			target = &ws[i]
			break
		}
	}
	if target == nil {
		return []error{fmt.Errorf("%s: selector %v matches no workload's pods", id, sel)}
	}
	var errs []error
	ports, _ := dig(m.Object, "spec", "ports").([]any)
	containers, _ := dig(target.pod, "spec", "containers").([]any)
	for _, p := range ports {
		tp := dig(p, "targetPort")
		if tp == nil {
			tp = dig(p, "port")
		}
		found := false
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			found = found || declaresPort(cm, tp)
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s: targetPort %v is not declared by the pods of %s/%s", id, tp, target.kind, target.name))
		}
	}
	return errs
}

// checkGoverningServices requires each StatefulSet's serviceName to be a
// rendered headless Service, which gives its pods their DNS names.
func checkGoverningServices(ms []Manifest, ws []workload) []error {
	headless := map[string]bool{}
	for _, m := range ms {
		if kind, name := m.Kind(); kind == "Service" && strings.EqualFold(fmt.Sprint(dig(m.Object, "spec", "clusterIP")), "None") {
			headless[name] = true
		}
	}
	var errs []error
	for _, w := range ws {
		if w.kind == "StatefulSet" && !headless[w.serviceName] {
			errs = append(errs, fmt.Errorf("StatefulSet/%s: serviceName %q is not a headless Service in the chart", w.name, w.serviceName))
		}
	}
	return errs
}
