# syntax=docker/dockerfile:1
#
# One image for every Trawler role but the renderer: the container's command
# picks the role (`worker`, `cdxwriter`, `launcher serve`, ...). Build with
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t trawler .
#
# The renderer (`trawler renderer`) needs headless Chromium and fonts, about
# 400 MB that no other role should carry, so it has an image of its own, the
# `renderer` stage: the same runtime plus Chromium.
#
#   docker build --target renderer --build-arg VERSION=... -t trawler-renderer .
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
FROM debian:bookworm-slim AS runtime

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

# ---- renderer image ------------------------------------------------------------
# The runtime above plus Debian's headless Chromium, which `trawler renderer`
# drives (and finds in PATH as `chromium`). It runs as the same uid 10001:
# Chromium's own sandbox needs user namespaces or a setuid helper, which
# most clusters and a non-root container do not give, so the renderer
# starts it with --no-sandbox (its default; the browser only ever talks to
# the renderer's recording proxy, which enforces the address guard). The
# small /dev/shm of a container is not used (--disable-dev-shm-usage):
# Chromium's shared memory goes to /tmp instead.
FROM runtime AS renderer

USER root
# Fonts decide how a screenshot looks: DejaVu and Liberation (metric-
# compatible with Arial, Times and Courier, which most pages ask for) and
# Noto Color Emoji. Pages in Chinese, Japanese or Korean need fonts-noto-cjk
# too (about 100 MB more); add it if the crawl has many. yt-dlp (and the
# ffmpeg it joins streams with) runs on media pages through the recording
# proxy (docs/renderer.md, Media); leave them out and pages render without.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        chromium \
        yt-dlp \
        ffmpeg \
        fonts-dejavu-core \
        fonts-liberation \
        fonts-noto-color-emoji \
    && rm -rf /var/lib/apt/lists/*

# Chromium writes its NSS database, caches and crash state under $HOME. The
# image user's home is /data, the WARC volume (shared with the stream's
# workers); /tmp keeps that state out of it, and is writable when the root
# filesystem is read-only (Helm mounts an emptyDir there).
ENV HOME=/tmp

USER 10001:10001
# 9100: admin (/metrics, /healthz, /readyz); 8090: the render API when
# --api-addr=:8090 is set (off by default).
EXPOSE 9100 8090

# ---- default image -------------------------------------------------------------
# The last stage is what `docker build` without --target produces: the
# plain runtime, without Chromium.
FROM runtime
