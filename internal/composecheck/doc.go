// Package composecheck checks Trawler's deployment files without Docker or
// Kubernetes, so a broken file fails `go test` instead of a deployment:
//
//   - docker-compose.yml, loaded and validated with compose-go exactly as
//     `docker compose` loads it, then held to the project's own rules
//     (images build from a Dockerfile that exists, bind mounts come from the
//     repository, no host port is published twice, Trawler roles run as a
//     non-root user, health-gated dependencies have a healthcheck);
//   - the Prometheus and Grafana files under deploy/: they parse, every
//     file they refer to exists, and Prometheus scrapes every long-running
//     Trawler service on its admin port;
//   - the Helm chart under helm/trawler, rendered with a small
//     text/template harness that implements the Helm functions the chart
//     uses, and its manifests checked for the invariants Kubernetes would
//     only report at apply time (selectors match pod labels, mounts name
//     declared volumes, probes hit declared ports) and for the project's
//     security rules (non-root, read-only root filesystem, secrets only by
//     reference).
//
// The tests run every check on the repository's files and on broken
// fixtures in testdata, so each rule is shown to fail when it should.
package composecheck
