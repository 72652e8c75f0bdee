#!/usr/bin/env bash
# Checks `make install`: into a temporary prefix, the binary has no Swift runtime libraries on its
# library path (ldd) and runs --version and a conversion with an environment that has no toolchain;
# completions and the man page are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
make --no-print-directory install PREFIX="$prefix" > "$prefix/install.log" 2>&1 || { cat "$prefix/install.log"; exit 1; }
bin="$prefix/bin/dumpkit"
fail() { echo "test_install: $*" >&2; exit 1; }

if ldd "$bin" | grep -q 'libswift\|libFoundation'; then fail "$bin links Swift runtime libraries: $(ldd "$bin" | grep 'libswift\|libFoundation')"; fi
version=$(env -i PATH=/usr/bin:/bin "$bin" --version) || fail "--version failed without the toolchain"
[ -n "$version" ] || fail "--version printed nothing"
printf '{"b":{"x":1},"a":[1,2]}' > "$prefix/in.json"
env -i PATH=/usr/bin:/bin "$bin" convert "$prefix/in.json" --canonical -o "$prefix/out.json" -q || fail "a conversion failed without the toolchain"
[ "$(cat "$prefix/out.json")" = '{"a":[1,2],"b":{"x":1}}' ] || fail "unexpected conversion: $(cat "$prefix/out.json")"
for f in share/bash-completion/completions/dumpkit share/zsh/site-functions/_dumpkit share/fish/vendor_completions.d/dumpkit.fish share/man/man1/dumpkit.1; do
    [ -s "$prefix/$f" ] || fail "$f was not installed"
done
grep -q 'migrate' "$prefix/share/bash-completion/completions/dumpkit" || fail "the bash completion does not know the subcommands"
grep -q '^\.Dt DUMPKIT 1' "$prefix/share/man/man1/dumpkit.1" || fail "the man page has no title"
echo "test_install: make install PREFIX=... gives a binary without Swift runtime libraries ($version), completions and a man page"
