# syntax=docker/dockerfile:1
#
# One image for every Trawler role: the container's command picks the role
# (`worker`, `cdxwriter`, `launcher serve`, ...). Build with
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t trawler .
#
# The cache mounts need BuildKit (the default builder since Docker 23).

ARG GO_VERSION=1.26

# ---- build stage -------------------------------------------------------------
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src

# Download modules in their own layer so source edits do not refetch them.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY . .

# VERSION is stamped into the binary and printed by `trawler version`.
ARG VERSION=dev
# CGO_ENABLED=0 gives a static binary, so the runtime image needs no libc
# match with the builder; -trimpath keeps builder paths out of stack traces.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w -X main.version=${VERSION}" \
        -o /out/trawler ./cmd/trawler

# ---- runtime stage -----------------------------------------------------------
# debian-slim rather than distroless/scratch: operators exec into workers to
# inspect WARCs and crawl logs, and the compose healthchecks use bash.
FROM debian:bookworm-slim

# ca-certificates: the crawler accepts any certificate when archiving, but
# talking to Kafka, Redis or an external OutbackCDX over TLS must verify.
# tzdata: the launcher reads feed schedules in a named zone
# (--time-zone Europe/London); bookworm-slim ships no zoneinfo.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/*

# A fixed uid/gid (10001) so Kubernetes runAsUser/fsGroup and compose `user:`
# can name it without looking it up in the image.
RUN groupadd --system --gid 10001 trawler \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data \
        --no-create-home --shell /usr/sbin/nologin trawler \
    && mkdir -p /data \
    && chown 10001:10001 /data

COPY --from=build /out/trawler /usr/local/bin/trawler

# Container defaults; every one can be overridden by flag or environment.
# The admin listener serves /metrics, /healthz and /readyz on all interfaces
# so Prometheus and probes can reach it from outside the container.
ENV TRAWLER_ADMIN_ADDR=:9100
ENV TRAWLER_DATA=/data
ENV TRAWLER_LOG_FORMAT=json

USER 10001:10001
WORKDIR /data
# A named volume mounted here starts out owned by 10001, because Docker
# copies the ownership of the image's /data into an empty volume.
VOLUME ["/data"]

# 9100: admin (/metrics, /healthz, /readyz); 8081: cdxwriter's CDX API.
EXPOSE 9100 8081

ENTRYPOINT ["trawler"]
