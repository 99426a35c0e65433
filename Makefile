# Call-center platform: developer commands. `make` lists them.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)

.DEFAULT_GOAL := help
.PHONY: help run up down status test test-cluster lint build fmt bench soak fuzz client

help: ## list the targets
	@echo "Targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: ## whole stack in the foreground with demo data; prints an API key and a sample request; Ctrl-C stops it
	@scripts/stack.sh run

up: ## the same in the background; prints BASE_URL and API_KEY
	@scripts/stack.sh up

down: ## stop the background stack
	@scripts/stack.sh down

status: ## show the stack's processes and their health
	@scripts/stack.sh status || true

test: ## every test of every module (starts or installs PostgreSQL and RabbitMQ as needed)
	@scripts/test.sh

test-cluster: ## fault scenarios on a three-node RabbitMQ cluster of its own (5701-5703), brought up and down
	@scripts/cluster-test.sh

lint: ## gofmt, go vet and staticcheck over every module; generated client up to date; spec lint
	@scripts/lint.sh

build: ## build every binary into .run/bin
	@scripts/stack.sh build

fmt: ## format every Go file of the workspace
	@gofmt -l -w $$(go work edit -json go.work | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)".*$$/\1/p')

bench: ## lead-scenario benchmarks, each beside a baseline of the same run (docs/performance.md)
	@scripts/bench.sh

soak: ## every operation (and bad input) at 300 req/s for SOAK_DURATION (10m); fails on 5xx or growth
	@SOAK_DURATION=$(SOAK_DURATION) scripts/soak.sh

fuzz: ## every fuzz target of the workspace for FUZZTIME each (default 10s; make fuzz FUZZTIME=5m)
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

client: ## regenerate the Go client (clients/go) from gateway/api/openapi.yaml
	@scripts/client-gen.sh
