#!/usr/bin/env bash
# Installs the real programs the tests start on loopback: redis-server,
# clamd (clamav-daemon; the tests give it their own signature database), and
# kcat (a foreign Kafka producer for the wire-compatibility test). Runs apt-get only
# when something is missing and we are root; otherwise says what to install.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v kcat >/dev/null 2>&1 || need+=(kcat)
command -v clamd >/dev/null 2>&1 || [ -x /usr/sbin/clamd ] || need+=(clamav-daemon)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
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
