#!/usr/bin/env bash
# test_install.sh BUILD_DIR TESTS_DIR: install, then build and run a consumer two ways.
set -euo pipefail
build=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)
so=$(readlink "$lib/liblipgnn.so")
[ -n "$so" ] || { echo "FAIL: liblipgnn.so is not a symlink to a versioned library"; exit 1; }
soname=$(objdump -p "$lib/liblipgnn.so" | awk '/SONAME/ {print $2}')
[[ "$soname" =~ ^liblipgnn\.so\.[0-9]+$ ]] || { echo "FAIL: soname '$soname'"; exit 1; }
cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <lipgnn.h>
int main(void) {
    lg_idx src[] = {0, 1}, dst[] = {1, 2};
    lg_graph *g = NULL;
    if (lg_graph_from_edges(&g, 3, 2, src, dst, LG_GRAPH_ADD_SELF_LOOPS) != LG_OK) return 1;
    printf("lipgnn %s (header %s) edges %lld\n", lg_version(), LG_VERSION_STRING, (long long)g->nnz);
    int same = strcmp(lg_version(), LG_VERSION_STRING) == 0 && g->nnz == 5;
    lg_graph_free(g);
    return same ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$lib/pkgconfig"
cc -std=c11 "$tmp/consumer.c" $(pkg-config --cflags lipgnn) -o "$tmp/c1" $(pkg-config --libs lipgnn)
LD_LIBRARY_PATH="$lib" "$tmp/c1"
mkdir -p "$tmp/proj"
cp "$tmp/consumer.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(lipgnn REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE lipgnn::lipgnn)
CM
cmake -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/proj/b" >/dev/null
LD_LIBRARY_PATH="$lib" "$tmp/proj/b/consumer"
"$tmp/prefix/bin/lipgnn" --version | head -1
# straight from the build tree, not installed: lipgnn-uninstalled.pc (build/lipgnn.pc pointed two
# directories above the build: -Ibuild/../..//include)
PKG_CONFIG_PATH="$build" cc -std=c11 "$tmp/consumer.c" $(PKG_CONFIG_PATH="$build" pkg-config --cflags lipgnn) \
  -o "$tmp/c2" $(PKG_CONFIG_PATH="$build" pkg-config --libs lipgnn)
"$tmp/c2"
echo "install: passed (soname $soname)"
