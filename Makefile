# The front door over CMake. `make` builds, `make test` runs the test suite,
# `make run Q="..."` answers a query; every target installs missing Debian
# packages first (`make deps`).

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
Q          ?= peft qwen3 1 gpu
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

# Debian packages the build needs: the one list (docs/dependencies.md says why each).
DEB_PACKAGES := cmake g++ make pkg-config sqlite3 libsqlite3-dev libre2-dev \
  libcmark-gfm-dev libcmark-gfm-extensions-dev cmark-gfm libboost-dev catch2 \
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libicu-dev libutf8proc-dev nettle-dev python3 python3-jsonschema help2man
# What `make asan`, `make fuzz` and `make bench` need on top: clang with its
# sanitizer and libFuzzer runtimes, llvm-symbolizer for readable reports,
# Python 3 for the seed corpus and the bench driver, GNU time for peak RSS.
DEB_PACKAGES_HARDEN := clang libclang-rt-14-dev llvm python3 time

# What `make format` and `make lint` need.
DEB_PACKAGES_LINT := clang-format clang-tidy

# What `make site` and `make site-test` need (docs/site.md): Sphinx and MyST,
# the furo theme and sphinx-copybutton (as near Megatron Bridge's docs/conf.py
# as Debian has), jieba for the Chinese search index, headless Chromium driven by Selenium
# (and a CJK font, so that the screenshots of the ja and zh pages are legible).
DEB_PACKAGES_SITE := python3-sphinx python3-myst-parser python3-jieba furo python3-sphinx-copybutton
DEB_PACKAGES_SITE_TEST := chromium chromium-driver python3-selenium fonts-wqy-zenhei
# Debian's Python, where the packages above are (not a pyenv or venv one).
SITE_PYTHON ?= /usr/bin/python3

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build kb test run install uninstall deb clean golden generate check-generated extract-code check-code-facts asan bench fuzz format lint site site-test

all: build

deps:
	@missing=$$(for p in $(DEB_PACKAGES) $(EXTRA_DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(BUILD)/CMakeCache.txt:
	@$(MAKE) --no-print-directory deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

kb: build
	$(BUILD)/kbc build --sources kb-sources -o $(BUILD)/kb.sqlite

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# `make run Q="..."` prints only the answer: the build's output is shown
# only when the build fails.
run:
	@log=$$(mktemp); if ! $(MAKE) --no-print-directory build >"$$log" 2>&1; then cat "$$log"; rm -f "$$log"; exit 2; fi; rm -f "$$log"
	@$(BUILD)/kbq "$(Q)"

# `make install [PREFIX=/usr/local] [DESTDIR=...]`: kbq and kbc (stripped,
# debug info in lib/debug), man pages, bash/zsh/fish completions, docs
# (packaging/install.cmake, docs/install.md). `make uninstall` removes every
# file the last install wrote ($(BUILD)/install_manifest.txt), then the
# folders it leaves empty.
PREFIX ?= /usr/local

# The manifest is kept in the prefix too (share/kbq/install_manifest.txt),
# so `make uninstall PREFIX=...` works from any build folder.
PREFIX ?= /usr/local
INSTALL_MANIFEST = $(DESTDIR)$(PREFIX)/share/kbq/install_manifest.txt

install: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target kbq kbc man
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix $(PREFIX)
	@{ cat $(BUILD)/install_manifest.txt; echo; echo "$(PREFIX)/share/kbq/install_manifest.txt"; } > "$(INSTALL_MANIFEST)"
	@echo "make install: $$(wc -l < "$(INSTALL_MANIFEST)") files under $(DESTDIR)$(PREFIX) (list: $(INSTALL_MANIFEST))"

# `make deb`: build/kbq_VERSION_ARCH.deb (CPack; packaging/install.cmake),
# the same files as make install under /usr, without the debug files.
deb: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target kbq kbc man
	cd $(BUILD) && rm -f kbq_*.deb && KB_INSTALL_NO_DEBUG_FILES=1 cpack -G DEB
	@ls -l $(BUILD)/kbq_*.deb

uninstall:
	@m="$(INSTALL_MANIFEST)"; [ -f "$$m" ] || m=$(BUILD)/install_manifest.txt; \
	if [ ! -f "$$m" ]; then echo "make uninstall: no $(INSTALL_MANIFEST) nor $(BUILD)/install_manifest.txt: nothing installed there"; exit 2; fi; \
	list=$$(mktemp); cp "$$m" "$$list"; n=0; \
	while IFS= read -r f; do [ -n "$$f" ] || continue; f="$(DESTDIR)$$f"; \
	  if [ -e "$$f" ] || [ -L "$$f" ]; then rm -f -- "$$f" && n=$$((n + 1)); fi; d=$$(dirname -- "$$f"); \
	  while [ "$$d" != / ] && [ "$$d" != "$(DESTDIR)" ] && rmdir -- "$$d" 2>/dev/null; do d=$$(dirname -- "$$d"); done; \
	done < "$$list"; rm -f "$$list"; \
	echo "make uninstall: removed $$n files (and the folders they leave empty)"

golden: build
	KBQ_UPDATE_GOLDEN=1 $(BUILD)/tests/kbtests "[golden]"
	@echo "golden files rewritten; review them with: git diff tests/golden"

generate: build
	$(BUILD)/kbc generate --sources kb-sources -o generated

# `make site`: the documentation site in $(BUILD)/site/<lang>/ (docs/site.md):
# Sphinx + MyST over generated/ with -W, one build per language, and the
# recipe finder's answers from kbq --batch. `make site-test` drives it in
# headless Chromium and saves screenshots in $(BUILD)/site/screenshots/.
site: build
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_SITE)"
	$(SITE_PYTHON) site/build.py --kbq $(BUILD)/kbq --src generated --out $(BUILD)/site --jobs $(JOBS)

site-test: site
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_SITE_TEST)"
	$(SITE_PYTHON) tests/site/test_site.py --kbq $(BUILD)/kbq --site $(BUILD)/site --generated generated

check-generated: build
	$(BUILD)/kbc generate --sources kb-sources -o generated --check

# `make extract-code MBRIDGE=PATH` reads a Megatron Bridge checkout into
# kb-sources/code/<commit>/ (Python 3); `make check-code-facts MBRIDGE=PATH`
# only compares (CI runs it on ../shared/upstream's newer snapshot).
MBRIDGE ?= ../shared/upstream/megatron-bridge/067f987df
MBRIDGE_ARGS ?= --commit 067f987df03b8355b03192d88d70f1709fedf51a --date 2026-08-22

extract-code: build
	$(BUILD)/kbc extract-code --mbridge $(MBRIDGE) $(MBRIDGE_ARGS)

check-code-facts: build
	@if [ -d "$(MBRIDGE)/src/megatron/bridge" ]; then \
	  $(BUILD)/kbc extract-code --mbridge $(MBRIDGE) $(MBRIDGE_ARGS) --check && echo "check-code-facts: kb-sources/code matches $(MBRIDGE)"; \
	else echo "check-code-facts: SKIPPED: no Megatron Bridge checkout at $(MBRIDGE)"; fi
# `make asan ASAN_CMAKE_ARGS=-DKB_FUZZ=ON` also builds the libFuzzer targets
# in the same folder (its libraries then carry libFuzzer's coverage
# instrumentation, which the tests run with: the sanitizer runtime has the
# hooks), and `make fuzz FUZZ_BUILD=build-asan` then runs them without a
# second instrumented build (one build for both, at -O1: the fuzzers run
# slower than in a RelWithDebInfo build-fuzz; CI keeps the two builds,
# docs/performance.md says why).
ASAN_BUILD ?= build-asan
ASAN_CMAKE_ARGS ?=

asan:
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_HARDEN)"
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKB_SANITIZE=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang $(ASAN_CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-bench

# `make format` rewrites every C++ file with the checked-in .clang-format;
# `make format CHECK=1` (CI) changes nothing and fails naming the files
# that are not formatted. `make lint` runs clang-tidy with the checks of
# .clang-tidy (each finding is an error) over the sources of the build.
# The compile commands are GCC's: clang-tidy's clang does not know the
# GCC-only -Wno-* flags of CMakeLists.txt, and under CI's -Werror that
# "unknown warning option" would be an error, hence the extra argument.
# clang-tidy reads a copy of them without a precompiled header (a GCC build
# with -DKB_PCH=ON has one, and GCC's .gch is not clang's format): each file
# is checked with its own includes.
CXX_SOURCES = $(shell git ls-files '*.cpp' '*.hpp' 2>/dev/null)

format:
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_LINT)"
ifeq ($(CHECK),)
	clang-format -i $(CXX_SOURCES)
else
	@bad=$$(for f in $(CXX_SOURCES); do clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "make format: not formatted (run make format):"; echo "$$bad"; exit 1; fi; \
	echo "make format: every C++ file is formatted"
endif

lint: build
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_LINT)"
	@mkdir -p $(BUILD)/lint
	sed -e 's# -Winvalid-pch -include [^ ]*/cmake_pch\.hxx##' $(BUILD)/compile_commands.json > $(BUILD)/lint/compile_commands.json
	git ls-files 'base/*.cpp' 'compiler/*.cpp' 'query/*.cpp' | xargs -P $(JOBS) -n 4 clang-tidy -p $(BUILD)/lint --quiet --extra-arg=-Wno-unknown-warning-option

# ---------------------------------------------------------------------------
# Measurement and hardening (docs/performance.md).
#
# `make bench`: a build in build-bench/ of the type users run (BUILD_TYPE:
# the one make run, make install and the .deb build; its -O2 code is
# smaller than Release's -O3, and the RSS and size targets are about what
# ships), then bench/run.sh prints every figure beside its floor (sqlite3,
# cmark-gfm) and the ratio. BENCH_BUILD_TYPE=Release for the -O3 build,
# BENCH_RUNS (kbq runs per query, default 30), BENCH_SCALES (default
# "10 100 1000"), BENCH_ARGS (more bench/run.sh flags).
BENCH_BUILD_TYPE ?= $(BUILD_TYPE)
BENCH_RUNS   ?= 30
BENCH_SCALES ?= 10 100 1000
BENCH_ARGS   ?=

bench:
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_HARDEN)"
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=$(BENCH_BUILD_TYPE) $(CMAKE_ARGS)
	cmake --build build-bench -j $(JOBS) --target kbc kbq kb_dsl_bench
	bench/run.sh --build build-bench --runs $(BENCH_RUNS) --scales "$(BENCH_SCALES)" $(BENCH_ARGS)

# `make fuzz`: the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/
# (FUZZ_BUILD=DIR for another folder),
# seeded from kb-sources, the seeds, the golden and bad queries
# (fuzz/seed_corpus.py), each run FUZZ_SECONDS (default 60). New corpus
# entries go to build-fuzz/corpus/<target>-work; a crash leaves
# build-fuzz/artifacts/<target>-crash-*; every target runs, and make fails
# at the end if one found something. FUZZ_ENV sets environment variables
# (FUZZ_ENV=KB_FUZZ_NO_ROUNDTRIP=1: fuzz_dsl looks for crashes only).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= fuzz_dsl fuzz_markdown fuzz_text_export fuzz_kb
FUZZ_BUILD   ?= build-fuzz
FUZZ_ARGS    ?=
FUZZ_ENV     ?=

fuzz:
	@$(MAKE) --no-print-directory deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_HARDEN)"
	@if grep -qs '^KB_FUZZ:BOOL=ON$$' $(FUZZ_BUILD)/CMakeCache.txt; then \
	  echo "make fuzz: $(FUZZ_BUILD) is a KB_FUZZ build already: building it as it is configured"; \
	else \
	  cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKB_FUZZ=ON \
	    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang $(CMAKE_ARGS); \
	fi
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	python3 fuzz/seed_corpus.py $(FUZZ_BUILD)/corpus
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  name=$${t#fuzz_}; mkdir -p $(FUZZ_BUILD)/corpus/$$t-work; \
	  echo "== $$t: $(FUZZ_SECONDS) s"; \
	  env UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 $(FUZZ_ENV) \
	  $(FUZZ_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=$$(if [ $$name = dsl ] || [ $$name = kb ]; then echo 4096; else echo 65536; fi) \
	    -print_final_stats=1 -dict=$(FUZZ_BUILD)/corpus/$$name.dict $(FUZZ_ARGS) \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- \
	    $(FUZZ_BUILD)/corpus/$$t-work $(FUZZ_BUILD)/corpus/$$name || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: findings in:$$failed (see $(FUZZ_BUILD)/artifacts/)"; exit 1; fi
