#!/usr/bin/env bash
# The deploy recipes against the repository, as far as this machine allows (no image registry:
# the image itself is not built here).
# - deploy/Containerfile: its build stage copies everything Package.swift needs: the manifest,
#   every folder a target lives in (read from `swift package dump-package`, so a new target
#   folder such as Fuzz/ or Plugins/ cannot be forgotten), and Package.resolved through a
#   glob, since it is git-ignored here and a fresh clone has none (a plain COPY of it would
#   fail); the resolve step must then work with and without it.
#   Then the build stage's context is made as those COPY lines make it, in a temporary folder,
#   and `swift package describe` reads the package there: it refuses a target whose folder is
#   missing, as the image's `swift build` would.
# - deploy/rolo.service: every `Documentation=` file:// URL names a page of Docs/, and the
#   unit's install comment puts Docs/ there.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RECIPE="$ROOT/deploy/Containerfile"
UNIT="$ROOT/deploy/rolo.service"
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
ok() { echo "ok   $1"; }

# The build stage's COPY sources (not COPY --from=...), one per line.
sources=$(awk '/^FROM /{stage++} stage==1 && /^COPY / && !/--from=/ {for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i}' "$RECIPE")
copied() { # copied PATH: a COPY source is PATH, a folder above it, or a glob matching it
    local path=$1 source
    while IFS= read -r source; do
        source=${source#./}; source=${source%/}
        [ "$source" = "." ] && return 0
        # shellcheck disable=SC2053
        [[ $path == $source || $path == $source/* ]] && return 0
    done <<<"$sources"
    return 1
}

manifest=$(cd "$ROOT" && swift package dump-package 2>/dev/null) || { fail "swift package dump-package"; exit 1; }
folders=$(python3 -c '
import json, sys
package = json.load(sys.stdin)
defaults = {"test": "Tests", "plugin": "Plugins"}
for target in package["targets"]:
    path = target.get("path") or "%s/%s" % (defaults.get(target["type"], "Sources"), target["name"])
    print(path.split("/")[0])
' <<<"$manifest" | sort -u)
[ -n "$folders" ] && ok "Package.swift's target folders: $(echo $folders)" || fail "no target folders read from Package.swift"
for folder in $folders; do
    if copied "$folder/x"; then ok "copied: $folder/"; else fail "deploy/Containerfile does not copy $folder/, where Package.swift has a target"; fi
done
copied Package.swift && ok "copied: Package.swift" || fail "deploy/Containerfile does not copy Package.swift"
if copied Package.resolved; then
    if grep -qE '^COPY .*Package\.resolved' "$RECIPE"; then
        fail "Package.resolved is copied by name: a fresh clone has none (it is git-ignored), so COPY would fail; use Package.*"
    else
        ok "Package.resolved copied when present (glob)"
    fi
    grep -qE 'Package\.resolved.*--force-resolved-versions' "$RECIPE" \
        && ok "a copied Package.resolved pins the versions" || fail "the resolve step does not use a copied Package.resolved"
else
    fail "deploy/Containerfile never copies Package.resolved (even when the context has one)"
fi
if (cd "$ROOT" && git check-ignore -q Package.resolved 2>/dev/null); then ok "Package.resolved is git-ignored (hence the glob)"; fi
for ignored in .build .git; do
    grep -qxF "$ignored/" "$ROOT/.dockerignore" 2>/dev/null && ok ".dockerignore keeps $ignored/ out of the context" \
        || fail ".dockerignore does not keep $ignored/ out of the build context"
done

# The build stage's /src as its COPY lines make it (globs expanded in the context, as COPY does).
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
while IFS= read -r source; do
    (cd "$ROOT" && for match in $source; do [ -e "$match" ] && cp -R "$match" "$context/"; done)
done <<<"$sources"
if described=$(cd "$context" && swift package describe 2>&1 >/dev/null); then
    ok "swift package describe reads the package in the build stage's context"
else
    fail "swift package describe in the build stage's context: $(echo "$described" | grep -m 3 -i error)"
fi

documentation=$(sed -n 's/^Documentation=//p' "$UNIT")
[ -n "$documentation" ] || fail "deploy/rolo.service has no Documentation="
for url in $documentation; do
    case $url in
        file:///usr/share/doc/rolo/*)
            page=${url#file:///usr/share/doc/rolo/}
            [ -f "$ROOT/Docs/$page" ] && ok "Documentation=$url is Docs/$page" || fail "Documentation=$url: no Docs/$page" ;;
        *) fail "Documentation=$url is not a page this repository installs" ;;
    esac
done
grep -E '^#.* install ' "$UNIT" | grep -F '/usr/share/doc/rolo' | grep -qF 'Docs/' && ok "the unit's install comment installs Docs/" \
    || fail "deploy/rolo.service does not say how Docs/ gets to /usr/share/doc/rolo"

[ "$failures" = 0 ] && echo "deploy recipes: all checks passed" || echo "deploy recipes: $failures failed"
[ "$failures" = 0 ]
