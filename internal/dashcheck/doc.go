// Package dashcheck holds the test that keeps the Grafana dashboards
// (deploy/grafana/dashboards) and the Prometheus alerting rules
// (deploy/prometheus/alerts.yml, shipped by Helm as a PrometheusRule) true
// to the metrics the roles export.
//
// The test crawls the synthetic web in-process, scrapes every role's
// /metrics, and checks every panel and rule expression with Prometheus's
// own PromQL parser and engine: each parses, each metric it names was
// scraped, and each evaluates over the scraped samples without error. It
// does so for a healthy crawl (nothing dead-lettered, no hostile hosts),
// where every counter a panel or alert reads must be exported from the
// first scrape, at zero when nothing happened, and for a crawl that met
// bad input. It is the reason the package exists; there is no non-test
// code.
package dashcheck
