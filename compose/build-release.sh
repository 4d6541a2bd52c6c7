#!/usr/bin/env bash
# The release build the image ships, in one place so `docker build` and a local measurement
# (`latchkey bench memory`, BENCHMARKS.md) run the same binaries. From the repository root:
#   bash compose/build-release.sh OUT_DIR     # gateway, identity, verification, accounts, reset, latchkey
#
# - --static-swift-stdlib: the Swift runtime and Foundation linked in, only what is used. Idle
#   resident memory per service falls by about 6 MB against the shared libraries (issue 19).
# - lld with packed relative relocations (DT_RELR, glibc >= 2.36): a static binary carries about
#   74,000 relative relocations, 1.8 MB as RELA that every process reads at start; as RELR a few kB.
# - --product per executable: the test-support targets (XCTest) have no static runtime to build against.
set -euo pipefail
out="${1:?usage: compose/build-release.sh OUT_DIR}"
scratch="${LATCHKEY_RELEASE_SCRATCH:-.build-release-static}"
flags=(-c release --static-swift-stdlib --scratch-path "$scratch"
  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
products=(gateway identity verification accounts reset latchkey)
for product in "${products[@]}"; do
  swift build "${flags[@]}" --product "$product"
done
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p "$out"
for product in "${products[@]}"; do cp "$bin/$product" "$out/"; done
