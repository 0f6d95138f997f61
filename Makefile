# chainprof: thin wrappers around CMake/ctest. Quick start: `make demo`, `make test`.
#   make            build (build/)
#   make demo       install what is missing, build, synthesize a small job with a problem, analyze it
#   make test       the whole ctest suite twice: gcc -Werror build, clang ASan+UBSan build
#   make bench      benchmarks (bench/), figures for docs/PERFORMANCE.md
#   make fuzz       libFuzzer builds of the fuzz targets (clang), build-fuzz/, each run FUZZ_SECONDS
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all deps build build-asan demo test test-gcc test-asan bench fuzz clean

all: build

deps:
	@bash scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCP_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCP_WERROR=ON -DCP_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)/chainprof

test-gcc: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test: test-gcc test-asan

# the analyze benchmark (issue targets: MB/s per core, peak RSS, thread scaling, gzip), then the
# Nsight Systems reader against SQLite's read speed and the model/plan timings; the other scripts in
# bench/ (tokenizer, probes, net, diagnose) compare with outside tools and are run by hand
bench: build
	@bash bench/run.sh $(BUILD)
	@bash bench/bench_nsys.sh $(BUILD)
	@bash bench/bench_model.sh $(BUILD)

# every target FUZZ_SECONDS (default 60) on the instrumented libraries; findings in build-fuzz/fuzz-findings
FUZZ_SECONDS ?= 60
fuzz: deps
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCP_FUZZ=ON -DCP_SANITIZE=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzzers
	@bash scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
