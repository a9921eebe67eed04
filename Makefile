# `make test` is the one test command (README, .ci/run): it installs missing
# apt packages the tests need when run as root, then runs every test with
# the race detector.
GO ?= go

.PHONY: test test-deps build lint demo

test: test-deps
	$(GO) test -race -count=1 -timeout 20m ./...

test-deps:
	./scripts/install-test-deps.sh

build:
	$(GO) build -trimpath -o bin/trawler ./cmd/trawler

lint:
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...

demo:
	$(GO) run ./cmd/trawler demo
