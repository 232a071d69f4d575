# plateau — build and test.
GO ?= go

.PHONY: build install test test-short race bench demo fuzz

build:
	$(GO) build -o bin/plateau ./cmd/plateau

install:
	$(GO) install ./cmd/plateau

# The full test suite (what CI runs). The engine and metrics run under the race
# detector as well; the binary must also build for macOS and Windows.
test:
	@out=$$(gofmt -l cmd internal bench deploy 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) build ./...
	GOOS=windows $(GO) build ./...
	# internal/cli runs the real JMeter, k6, Gatling and Locust and every
	# demo: 1,059 s on a clean clone (2026-11-29); the timeout is a hang
	# guard with room for a loaded machine, not a speed goal.
	$(GO) test -count=1 -timeout 45m ./...
	$(GO) test -count=1 -race -timeout 20m ./internal/engine/... ./internal/metrics/...

# Every fuzz target for FUZZTIME (default 10s) with a 2 s minimisation.
fuzz:
	./scripts/fuzz.sh

test-short:
	$(GO) test -short ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/engine/... ./internal/metrics/...

demo:
	$(GO) run ./cmd/plateau demo
