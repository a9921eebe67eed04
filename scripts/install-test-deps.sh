#!/usr/bin/env bash
# Installs the real programs the tests start on loopback: redis-server,
# clamd (clamav-daemon; the tests give it their own signature database),
# kcat (a foreign Kafka producer for the wire-compatibility test), and
# node with warcio.js (an independent WARC reader that test/warciojs
# validates Trawler's WARCs with), and Chromium (the renderer's browser,
# which pkg/browser, services/renderer and services/standalone drive). Runs apt-get only when something is
# missing and we are root; otherwise says what to install.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v kcat >/dev/null 2>&1 || need+=(kcat)
# python3-doc: a real Sphinx site (its HTML and JavaScript) that
# services/standalone crawls to count the links guessed from scripts.
compgen -G '/usr/share/doc/python3.*/html/_static/searchtools.js' >/dev/null || need+=(python3-doc)
# postgresql-doc and git-doc: with python3-doc, over 2,000 real HTML pages
# that pkg/extract's differential test extracts both ways.
compgen -G '/usr/share/doc/postgresql-doc-*/html/index.html' >/dev/null || need+=(postgresql-doc)
[ -f /usr/share/doc/git-doc/git.html ] || need+=(git-doc)
command -v clamd >/dev/null 2>&1 || [ -x /usr/sbin/clamd ] || need+=(clamav-daemon)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v chromium >/dev/null 2>&1 || need+=(chromium fonts-dejavu-core)
# ffmpeg makes the short MP4 and two-variant HLS stream that the stream
# extraction and media tests crawl (internal/mediafixture).
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
# yt-dlp: the renderer runs it on media pages through the recording proxy
# (pkg/media; services/renderer's media tests).
command -v yt-dlp >/dev/null 2>&1 || need+=(yt-dlp)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing test dependencies: ${need[*]} (install them: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
  # The tests start their own servers; the packaged service is not needed.
  if command -v systemctl >/dev/null 2>&1; then
    for unit in redis-server clamav-daemon clamav-freshclam; do
      systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
  fi
fi

# warcio.js, at the exact version (and dependency tree) pinned by
# test/warciojs/package.json and package-lock.json, goes into .cache/warcio
# (git-ignored), not a global or repository node_modules. It is installed
# again only when missing or when the pinned lock file has changed.
pin=test/warciojs
dest=.cache/warcio
if [ ! -f "$dest/node_modules/warcio/package.json" ] ||
  ! cmp -s "$pin/package-lock.json" "$dest/package-lock.json"; then
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$pin/package.json" "$pin/package-lock.json" "$dest/"
  # npm ci installs exactly the lock file; no install scripts are run.
  npm ci --prefix "$dest" --ignore-scripts --no-audit --no-fund --loglevel=error
fi

# helm, for internal/composecheck's TestRealHelm (helm lint --strict and
# helm template of the chart; under CI=true a missing helm fails it). Built
# with the Go toolchain from the module proxy into .cache/helm/<version>
# (git-ignored); keep the version equal to helmVersion in
# internal/composecheck/helmbin_test.go.
helm_version=v3.22.0
if [ ! -x ".cache/helm/$helm_version/helm" ]; then
  GOBIN="$PWD/.cache/helm/$helm_version" go install "helm.sh/helm/v3/cmd/helm@$helm_version"
fi
