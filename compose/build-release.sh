#!/usr/bin/env bash
# The release build the image ships, in one place so `docker build` and a local measurement
# (`latchkey bench memory`, BENCHMARKS.md) run the same binaries. From the repository root:
#   bash compose/build-release.sh OUT_DIR [SYMBOLS_DIR]
# OUT_DIR gets latchkey (stripped) and gateway, identity, verification, accounts, reset linked to
# it; SYMBOLS_DIR (default OUT_DIR.symbols) gets latchkey.debug, its symbols for crash reports
# (`gdb`, `addr2line -e`, `llvm-symbolizer` find them by the binary's debug link and build id).
# It prints the executable's size and what the image's final stage adds, and fails when the
# stripped executable is larger than its budget.
#
# - --static-swift-stdlib: the Swift runtime and FoundationEssentials linked in, only what is used. Idle
#   resident memory per service falls by about 6 MB against the shared libraries.
# - lld with packed relative relocations (DT_RELR, glibc >= 2.36): a static binary carries about
#   74,000 relative relocations, 1.8 MB as RELA that every process reads at start; as RELR a few kB.
# - libstdc++ linked in too (the Swift runtime is C++): as a shared library
#   its start-up (relocations, locale set-up) kept about 3 MB resident in every process. The
#   toolchain's static link line names plain -lstdc++, so a search directory placed first that
#   holds only libstdc++.a makes the linker take the archive.
# - One binary for all: `latchkey` invoked by a service's name is that service, so the five
#   processes share one file's pages. Five static executables each kept their own copy of the
#   runtime resident: the stack's summed PSS went from 31 MB (shared libraries) to 71 MB.
# - --product: the test-support targets (XCTest) have no static runtime to build against.
set -euo pipefail
out="${1:?usage: compose/build-release.sh OUT_DIR [SYMBOLS_DIR]}"
symbols="${2:-$out.symbols}"
# The budget for the stripped executable: 16.5 MB today, plus room for the features ahead. The
# server's modules import FoundationEssentials only: one `import Foundation` among them links
# Foundation's ICU, 34 MB of data and about 10 MB of code, and this check fails.
budget_bytes=20000000
scratch="${LATCHKEY_RELEASE_SCRATCH:-.build-release-static}"
archive=$("$(dirname "$(command -v swift)")/clang" -print-file-name=libstdc++.a)
if [ ! -f "$archive" ]; then
  echo "compose/build-release.sh: libstdc++.a not found (Debian: libstdc++-12-dev)" >&2
  exit 1
fi
static_cxx="$scratch/static-libstdc++"
mkdir -p "$static_cxx"
ln -sf "$archive" "$static_cxx/libstdc++.a"
flags=(-c release --static-swift-stdlib --scratch-path "$scratch" -Xswiftc -L -Xswiftc "$(cd "$static_cxx" && pwd)"
  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
swift build "${flags[@]}" --product latchkey
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p "$out" "$symbols"
objcopy --only-keep-debug "$bin/latchkey" "$symbols/latchkey.debug"
chmod 0644 "$symbols/latchkey.debug"
objcopy --strip-all --add-gnu-debuglink="$symbols/latchkey.debug" "$bin/latchkey" "$out/latchkey"
for service in gateway identity verification accounts reset; do
  ln -sfn latchkey "$out/$service"
done
bash "$(dirname "$0")/image-size.sh" "$out" "$bin/latchkey" "$symbols/latchkey.debug" "$budget_bytes"
