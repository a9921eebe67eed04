# `make test` is the one test command (README, .ci/run): it installs missing
# apt packages the tests need when run as root, then runs every test with
# the race detector.
GO ?= go

.PHONY: test test-deps build lint demo fuzz

test: test-deps
	$(GO) test -race -count=1 -timeout 20m ./...
	@# The extraction's differential test over 2,000 real pages runs without
	@# the race detector, which would make it 10 times slower (it skips under -race).
	$(GO) test -count=1 -v -run TestRealPagesFastEqualsReference ./pkg/extract/
	@# The short fault-injection suite (docs/chaos.md): its report is in the log.
	$(GO) test -race -count=1 -tags chaos -v -run TestChaos -timeout 15m ./test/chaos/

test-deps:
	./scripts/install-test-deps.sh

build:
	$(GO) build -trimpath -o bin/trawler ./cmd/trawler

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	@# go.mod and go.sum must be tidy: -diff prints what tidy would change (and exits 1).
	@out="$$($(GO) mod tidy -diff 2>&1)" || { echo "$$out"; echo "go mod tidy: go.mod/go.sum are not tidy (run go mod tidy)"; exit 1; }
	$(GO) run $(STATICCHECK) ./...

demo:
	$(GO) run ./cmd/trawler demo

# Every fuzz target for FUZZTIME each (default 10s; FUZZTIME=10m make fuzz).
fuzz:
	./scripts/fuzz.sh
