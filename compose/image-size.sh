#!/usr/bin/env bash
# What the image's final stage adds to its base, printed by compose/build-release.sh:
# the files it copies from the build (OUT_DIR) and the Debian packages it installs, read from
# the Dockerfile's last stage, with every dependency the base does not hold, sized by dpkg's
# Installed-Size (the packages installed on the machine that builds: the build stage's own).
# Exits 1 when the stripped executable is larger than BUDGET_BYTES.
# Usage: compose/image-size.sh OUT_DIR UNSTRIPPED SYMBOLS BUDGET_BYTES
set -euo pipefail
out="$1" unstripped="$2" symbols="$3" budget="$4"
dockerfile="$(dirname "$0")/Dockerfile"
mb() { awk -v bytes="$1" 'BEGIN { printf "%.1f MB", bytes / 1000000 }'; }

executable=$(stat -c %s "$out/latchkey")
copied=$(du -sb "$out" | cut -f1)
echo "build-release: latchkey $(mb "$executable") stripped ($(mb "$(stat -c %s "$unstripped")") as linked; symbols $(mb "$(stat -c %s "$symbols")") in $symbols)"

# The packages of the last stage's `apt-get install`, flags and shell words dropped.
last_stage=$(awk -v stages="$(grep -c '^FROM ' "$dockerfile")" '/^FROM /{ n++ } n == stages' "$dockerfile")
requested=$(echo "$last_stage" | tr '\n\\' '  ' | grep -o 'apt-get install[^&]*' | sed 's/apt-get install//' \
  | tr ' ' '\n' | grep -v -e '^-' -e '^$' || true)
# closure PACKAGE...: each package and what it depends on, as far as dpkg knows them (each
# dependency's first alternative, without its version or architecture); unknown: not installed here.
declare -A closure=() unknown=()
closure() {
  local queue=("$@") package depends
  while [ ${#queue[@]} -gt 0 ]; do
    package="${queue[0]}"
    queue=("${queue[@]:1}")
    [ -n "${closure[$package]:-}" ] && continue
    if ! depends=$(dpkg-query -W -f='${Pre-Depends}, ${Depends}' "$package" 2>/dev/null); then
      unknown[$package]=1
      continue
    fi
    closure[$package]=1
    queue+=($(echo "$depends" | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:[a-z0-9]+//; s/ //g' | grep -v '^$' || true))
  done
}
# The slim base is Debian's minimal system: the packages of priority "required", apt, and their dependencies.
closure apt $(dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2 == "required" { print $1 }')
declare -A base=()
for package in "${!closure[@]}"; do base[$package]=1; done
closure=()
closure $requested
added_kb=0 counted=() in_base=()
for package in $(printf '%s\n' "${!closure[@]}" | sort); do
  if [ -n "${base[$package]:-}" ]; then
    in_base+=("$package")
  else
    counted+=("$package")
    added_kb=$((added_kb + $(dpkg-query -W -f='${Installed-Size}' "$package")))
  fi
done
echo "build-release: the final stage adds $(mb $((copied + added_kb * 1024))): the copied files $(mb "$copied"), and $(mb $((added_kb * 1024))) in ${#counted[@]} packages (${counted[*]})"
[ ${#in_base[@]} -eq 0 ] || echo "build-release: already in the base image: ${in_base[*]}"
[ ${#unknown[@]} -eq 0 ] || echo "build-release: not installed here, so not measured: ${!unknown[*]}"
if [ "$executable" -gt "$budget" ]; then
  echo "build-release: latchkey is $(mb "$executable") stripped, over its budget of $(mb "$budget") (compose/build-release.sh;" \
    "a server module that imports Foundation instead of FoundationEssentials adds about 44 MB)" >&2
  exit 1
fi
