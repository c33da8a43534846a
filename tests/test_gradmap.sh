#!/usr/bin/env bash
# lipgnn gradmap tests: test_gradmap.sh LIPGNN_BINARY TESTS_DIR. Exit 0 pass, 1 fail.
set -u
bin=$1
. "$(dirname "$0")/testlib.sh"

# two tiny models, without and with LipschitzNorm
L=4 E=12
train_args=(train --trees 3 --trees-count 100 --layers $L --hidden 8 --epochs $E --quiet)
run "${train_args[@]}" --grad-log "$tmp/plain.csv"; expect_rc 0 "train (no norm)"
run "${train_args[@]}" --norm lipschitz --grad-log "$tmp/lip.csv"; expect_rc 0 "train --norm lipschitz"
[ "$(head -1 "$tmp/plain.csv")" = "epoch,layer,group,norm" ] || fail "grad-log header: $(head -1 "$tmp/plain.csv")"
[ "$(($(wc -l <"$tmp/plain.csv") - 1))" = $((E * (L * 2 + 2))) ] || fail "grad-log rows: $(wc -l <"$tmp/plain.csv")"

run gradmap --help; expect_rc 0 "gradmap --help"; grep -q -- "--log FILE" "$tmp/out" || fail "gradmap --help lacks --log"
run --help; grep -q "gradmap" "$tmp/out" || fail "lipgnn --help does not list gradmap"

# one log
run gradmap --log "$tmp/plain.csv" --out "$tmp/one.svg"; expect_rc 0 "gradmap one log"; no_sanitizer "one log"
grep -qx "$tmp/one.svg" "$tmp/err" || fail "output path not printed on stderr: $(cat "$tmp/err")"
wellformed "$tmp/one.svg"
[ "$(count 'class="cell"' "$tmp/one.svg")" = $((L * E)) ] || fail "one log: $(count 'class="cell"' "$tmp/one.svg") cells, expected $((L * E))"
[ "$(count 'class="panel"' "$tmp/one.svg")" = 1 ] || fail "one log: not 1 panel"
grep -q '>epoch</text>' "$tmp/one.svg" || fail "no 'epoch' axis title"
grep -q '>layer</text>' "$tmp/one.svg" || fail "no 'layer' axis title"
grep -q 'id="colorbar"' "$tmp/one.svg" || fail "no colour bar"
[ "$(count 'class="cbar-tick"' "$tmp/one.svg")" -ge 2 ] || fail "colour bar has fewer than 2 tick labels"
grep -q '>plain.csv</text>' "$tmp/one.svg" || fail "panel title is not the file's base name"
grep -q 'inf / nan' "$tmp/one.svg" || fail "no legend note for inf/nan"

# two logs: two panels, one colour scale
run gradmap --log "$tmp/plain.csv" --log "$tmp/lip.csv" --label "no norm" --label "LipschitzNorm & <co>" \
    --title "Fig. 2 style" --out "$tmp/two.svg"
expect_rc 0 "gradmap two logs"; no_sanitizer "two logs"
wellformed "$tmp/two.svg"
[ "$(count 'class="panel"' "$tmp/two.svg")" = 2 ] || fail "two logs: $(count 'class="panel"' "$tmp/two.svg") panels"
[ "$(count 'class="cell"' "$tmp/two.svg")" = $((2 * L * E)) ] || fail "two logs: $(count 'class="cell"' "$tmp/two.svg") cells"
[ "$(count 'id="colorbar"' "$tmp/two.svg")" = 1 ] || fail "two logs: not one shared colour bar"
grep -q 'LipschitzNorm &amp; &lt;co&gt;' "$tmp/two.svg" || fail "label not XML-escaped"
grep -q 'Fig. 2 style' "$tmp/two.svg" || fail "no title"

# the explosion detector run again on a log: where train's fired (epoch and layer as its --json gives
# them), a dashed line and a framed cell, a verdict below the panels and on stderr; none at the defaults
run "${train_args[@]}" --explode-threshold 1e-3 --json --grad-log "$tmp/xp.csv"; expect_rc 0 "train --explode-threshold 1e-3"
xe=$(grep -o '"first_explosion_epoch":[0-9]*' "$tmp/out" | cut -d: -f2)
xl=$(grep -o '"explosion_layer":-\?[0-9]*' "$tmp/out" | cut -d: -f2)
[ -n "$xe" ] && [ -n "$xl" ] || fail "train --explode-threshold 1e-3 did not explode: $(cat "$tmp/out")"
run gradmap --log "$tmp/xp.csv" --explode-threshold 1e-3 --out "$tmp/xp.svg"; expect_rc 0 "gradmap --explode-threshold"
no_sanitizer "gradmap --explode-threshold"
wellformed "$tmp/xp.svg"
grep -q "note: $tmp/xp.csv: explosion at epoch $xe: gradient norm of layer $xl " "$tmp/err" \
  || fail "gradmap's verdict differs from train's (epoch $xe, layer $xl): $(cat "$tmp/err")"
grep -q ">xp.csv: explosion at epoch $xe: gradient norm of layer $xl " "$tmp/xp.svg" || fail "no verdict in the SVG"
[ "$(count 'class="explosion"' "$tmp/xp.svg")" = 1 ] && [ "$(count 'class="explosion-cell"' "$tmp/xp.svg")" = 1 ] \
  || fail "explosion: not one marker line and one framed cell"
run gradmap --log "$tmp/xp.csv" --out "$tmp/xp0.svg"; expect_rc 0 "gradmap at the default thresholds"
grep -q 'xp.csv: no explosion (threshold 1000, growth 1000 over 10 epochs)' "$tmp/xp0.svg" || fail "no 'no explosion' verdict"
grep -q 'class="explosion\(-cell\)\?"' "$tmp/xp0.svg" && fail "an explosion marked at the default thresholds"
grep -q 'note:' "$tmp/err" && fail "a note without an explosion: $(cat "$tmp/err")"
# growth: layer 1 grows 150x in 2 epochs at epoch 4 (150 >= threshold / growth = 100); the frame at
# epoch 4's column of layer 1's row (the bottom row is layer 0)
{ echo "epoch,layer,group,norm"
  for e in 1 2 3 4 5 6; do
    echo "$e,0,all,1"; echo "$e,1,all,$([ $e -ge 4 ] && echo 150 || echo 1)"; echo "$e,0,attention,1"; echo "$e,1,attention,1"
  done; } >"$tmp/grow.csv"
run gradmap --log "$tmp/grow.csv" --explode-growth 10 --explode-window 2 --out "$tmp/grow.svg"; expect_rc 0 "gradmap, growth"
grep -q "note: $tmp/grow.csv: explosion at epoch 4: gradient norm of layer 1 grew 150x in 2 epochs (1 -> 150)" "$tmp/err" \
  || fail "growth: $(cat "$tmp/err")"
grep -q '<rect class="explosion-cell"[^>]* x="302" y="34" width="80" height="70"' "$tmp/grow.svg" \
  || fail "growth: the framed cell: $(grep explosion-cell "$tmp/grow.svg")"
grep -q '<line class="explosion"[^>]* x1="342" ' "$tmp/grow.svg" || fail "growth: the line: $(grep 'class="explosion"' "$tmp/grow.svg")"
run gradmap --log "$tmp/grow.csv" --explode-growth 200 --explode-window 2 --out "$tmp/grow.svg"; expect_rc 0 "gradmap, growth 200"
grep -q 'no explosion (threshold 1000, growth 200 over 2 epochs)' "$tmp/grow.svg" || fail "growth 200: $(grep verdict "$tmp/grow.svg")"
# a resumed run's log (its first epoch after 1): replayed from there, and said; growth at epoch 4
# against epoch 2 is then not seen, that at epoch 5 against epoch 3 is
grep -v '^[12],' "$tmp/grow.csv" >"$tmp/resumed.csv"
run gradmap --log "$tmp/resumed.csv" --explode-growth 10 --explode-window 2 --out "$tmp/resumed.svg"
expect_rc 0 "gradmap, a log from epoch 3"
grep -q "note: $tmp/resumed.csv: explosion at epoch 5: gradient norm of layer 1 grew 150x in 2 epochs (1 -> 150) (replayed from epoch 3, the log's first: the epochs before are not seen)" \
  "$tmp/err" || fail "a log from epoch 3: $(cat "$tmp/err")"
run gradmap --log "$tmp/grow.csv" --explode-window 0 --out "$tmp/w0.svg"; expect_rc 0 "gradmap --explode-window 0"
grep -q 'no explosion (threshold 1000, no growth check: window 0)' "$tmp/w0.svg" || fail "window 0: $(grep verdict "$tmp/w0.svg")"
# the figure is as wide as its longest verdict (it was cut at the colour bar's edge)
run gradmap --log "$tmp/grow.csv" --label "$(printf 'L%.0s' $(seq 1 150))" --explode-growth 10 --explode-window 2 \
    --out "$tmp/wide.svg"
expect_rc 0 "gradmap, a long label"
w=$(grep -o '<svg[^>]* width="[0-9.]*"' "$tmp/wide.svg" | grep -o 'width="[0-9.]*"' | grep -o '[0-9.]*')
n=$(grep -o '>L*: explosion at epoch 4[^<]*<' "$tmp/wide.svg" | wc -c)
[ -n "$w" ] && [ "$n" -gt 150 ] && awk -v w="$w" -v n="$n" 'BEGIN { exit !(w >= 62 + 6 * n) }' \
  || fail "a long verdict: width $w for $n characters"
# an abbreviation of the explode options is refused as ambiguous, as train does
run gradmap --log "$tmp/grow.csv" --out "$tmp/x.svg" --explode 5; expect_rc 2 "gradmap --explode 5"
run train --trees 2 --trees-count 20 --epochs 1 --explode 5; expect_rc 2 "train --explode 5"

# the linear layers' rows: the input one must be layer -1; another group is refused
printf 'epoch,layer,group,norm\n1,0,all,1\n1,0,input,1\n' >"$tmp/in0.csv"
run gradmap --log "$tmp/in0.csv" --out "$tmp/x.svg"; expect_rc 2 "gradmap, an input row of layer 0"
grep -q "in0.csv:3: the input layer's row has layer '0', not -1" "$tmp/err" || fail "input row of layer 0: $(cat "$tmp/err")"
printf 'epoch,layer,group,norm\n1,0,all,1\n1,-1,all,1\n' >"$tmp/neg.csv"
run gradmap --log "$tmp/neg.csv" --out "$tmp/x.svg"; expect_rc 2 "gradmap, layer -1 of group all"
for l in x ''; do # (an unparsed layer read as -1)
  printf 'epoch,layer,group,norm\n1,0,all,1\n1,%s,input,1\n' "$l" >"$tmp/inx.csv"
  run gradmap --log "$tmp/inx.csv" --group all --out "$tmp/x.svg"; expect_rc 2 "gradmap, an input row of layer '$l'"
  grep -q "inx.csv:3: the input layer's row has layer '$l', not -1" "$tmp/err" || fail "input row of layer '$l': $(cat "$tmp/err")"
done
# the output row must name the layer count; a repeated one is named as such
printf 'epoch,layer,group,norm\n1,0,all,1\n1,7,output,2\n' >"$tmp/out7.csv"
run gradmap --log "$tmp/out7.csv" --group all --out "$tmp/x.svg"; expect_rc 2 "gradmap, an output row of layer 7 of 1"
grep -q "out7.csv:3: the output layer's row has layer 7, not 1 (the attention layers are 0..0)" "$tmp/err" \
  || fail "output row of layer 7: $(cat "$tmp/err")"
printf 'epoch,layer,group,norm\n1,0,all,1\n1,1,output,2\n1,1,output,3\n' >"$tmp/odup.csv"
run gradmap --log "$tmp/odup.csv" --group all --out "$tmp/x.svg"; expect_rc 2 "gradmap, a repeated output row"
grep -q "odup.csv:4: epoch 1, layer 1, group output repeats line 3" "$tmp/err" || fail "a repeated output row: $(cat "$tmp/err")"
printf 'epoch,layer,group,norm\n1,0,all,1\n1,-1,input,1\n1,-1,input,1\n' >"$tmp/idup.csv"
run gradmap --log "$tmp/idup.csv" --group all --out "$tmp/x.svg"; expect_rc 2 "gradmap, a repeated input row"
grep -q "idup.csv:4: epoch 1, layer -1, group input repeats line 3" "$tmp/err" || fail "a repeated input row: $(cat "$tmp/err")"
# input rows without output rows: the top row is the last attention layer (it was taken for the output
# layer: labelled 'out' and left out of the replay, which then missed its explosion)
{ echo "epoch,layer,group,norm"
  for e in 1 2 3 4; do
    echo "$e,-1,input,1"; echo "$e,0,all,1"; echo "$e,1,all,1"; echo "$e,2,all,$([ $e -ge 3 ] && echo 5000 || echo 1)"
  done; } >"$tmp/inonly.csv"
run gradmap --log "$tmp/inonly.csv" --group all --out "$tmp/inonly.svg"; expect_rc 0 "gradmap, input rows alone"
grep -q "note: $tmp/inonly.csv: explosion at epoch 3: gradient norm of layer 2 is 5e+03 > threshold 1e+03" "$tmp/err" \
  || fail "input rows alone: the verdict: $(cat "$tmp/err")"
grep -q '>out</text>' "$tmp/inonly.svg" && fail "input rows alone: an 'out' label"
grep -q '<title>layer 2, epoch 3: 5000</title>' "$tmp/inonly.svg" && grep -q '<title>input layer, epoch 1: 1</title>' "$tmp/inonly.svg" \
  || fail "input rows alone: tooltips"
# a deep model's 'in' and 'out' labels do not overlap its layer numbers
{ echo "epoch,layer,group,norm"; for l in $(seq 0 63); do echo "1,$l,all,1"; done; echo "1,-1,input,1"; echo "1,64,output,1"; } >"$tmp/deep.csv"
run gradmap --log "$tmp/deep.csv" --group all --out "$tmp/deep.svg"; expect_rc 0 "gradmap, 64 layers with linear layers"
/usr/bin/python3 - "$tmp/deep.svg" <<'PY' || fail "64 layers: labels overlap"
import re, sys
s = open(sys.argv[1]).read()
ys = {t: float(y) for y, t in re.findall(r'<text x="56" y="([0-9.]+)" font-size="11" text-anchor="end">([^<]*)</text>', s)}
assert 'in' in ys and 'out' in ys, ys
for t, y in ys.items():
    if t not in ('in', 'out'):
        assert abs(y - ys['in']) >= 11 and abs(y - ys['out']) >= 11, (t, y, ys['in'], ys['out'])
PY
# the detector on a log with the linear layers' rows: they are not its layers (the frame is at the
# attention layer it names, one row above the input row)
run gradmap --log "$tmp/xp.csv" --group all --explode-threshold 1e-3 --out "$tmp/xpa.svg"; expect_rc 0 "gradmap --group all --explode-threshold"
grep -q "note: $tmp/xp.csv: explosion at epoch $xe: gradient norm of layer $xl " "$tmp/err" \
  || fail "--group all: the verdict differs from train's (epoch $xe, layer $xl): $(cat "$tmp/err")"

# a log the detector cannot be run on: a norm missing, or no 'all' rows: said, the map drawn
grep -v '^3,1,all,' "$tmp/grow.csv" >"$tmp/gap.csv"
run gradmap --log "$tmp/gap.csv" --out "$tmp/gap.svg"; expect_rc 0 "gradmap, a norm missing"
grep -q "note: $tmp/gap.csv: the explosion detector not run: the log has no 'all' norm of epoch 3, layer 1 (none up to epoch 2)" "$tmp/err" \
  || fail "a norm missing: $(cat "$tmp/err")"
grep -q 'class="explosion"' "$tmp/gap.svg" && fail "a norm missing: an explosion marked"
# a gap after the explosion: it is found (the replay stopped at the gap, before it)
grep -v '^6,1,all,' "$tmp/grow.csv" >"$tmp/gap6.csv"
run gradmap --log "$tmp/gap6.csv" --explode-growth 10 --explode-window 2 --out "$tmp/gap6.svg"; expect_rc 0 "gradmap, a gap after the explosion"
grep -q "note: $tmp/gap6.csv: explosion at epoch 4: gradient norm of layer 1 grew 150x" "$tmp/err" || fail "a gap after the explosion: $(cat "$tmp/err")"
grep -v ',all,' "$tmp/grow.csv" >"$tmp/att.csv"
run gradmap --log "$tmp/att.csv" --out "$tmp/att.svg"; expect_rc 0 "gradmap, no 'all' rows"
grep -q "the explosion detector not run: the log has no 'all' rows" "$tmp/err" || fail "no 'all' rows: $(cat "$tmp/err")"
{ sed -n 1,4p "$tmp/grow.csv"; echo "1,1,all,1"; sed -n '5,$p' "$tmp/grow.csv"; } >"$tmp/rep.csv"
run gradmap --log "$tmp/rep.csv" --out "$tmp/rep.svg"; expect_rc 0 "gradmap, an 'all' norm repeated"
grep -q "the explosion detector not run: line 5 repeats the 'all' norm of epoch 1, layer 1" "$tmp/err" \
  || fail "a repeated 'all' norm: $(cat "$tmp/err")"
for bad in "--explode-threshold 0" "--explode-growth 1" "--explode-window -1" "--explode-window x"; do
  run gradmap --log "$tmp/grow.csv" --out "$tmp/x.svg" $bad; expect_rc 2 "gradmap $bad"
  grep -q -- "${bad% *}" "$tmp/err" || fail "gradmap $bad: message does not name the option: $(cat "$tmp/err")"
done

# --group all: the other rows
run gradmap --log "$tmp/plain.csv" --group all --out "$tmp/all.svg"; expect_rc 0 "gradmap --group all"
wellformed "$tmp/all.svg"
# with the input and output linear layers' rows, below and above the attention layers
[ "$(count 'class="cell"' "$tmp/all.svg")" = $(((L + 2) * E)) ] || fail "--group all: $(count 'class="cell"' "$tmp/all.svg") cells"
grep -q '<title>input layer, epoch 1: ' "$tmp/all.svg" && grep -q "<title>output layer, epoch $E: " "$tmp/all.svg" \
  && grep -q "<title>layer $((L - 1)), epoch 1: " "$tmp/all.svg" || fail "--group all: the linear layers' tooltips"
grep -q '>in</text>' "$tmp/all.svg" && grep -q '>out</text>' "$tmp/all.svg" || fail "--group all: no in/out labels"
v=$(grep '^1,-1,input,' "$tmp/plain.csv" | cut -d, -f4)
grep -q "<title>input layer, epoch 1: $(printf '%.4g' "$v")</title>" "$tmp/all.svg" || fail "--group all: the input row's value ($v)"
# the input row is the bottom one, the output row the top one
grep -q "<rect class=\"cell\" x=\"62\" y=\"34\" [^>]*><title>output layer, epoch 1: " "$tmp/all.svg" \
  || fail "--group all: the output layer is not the top row: $(grep -m1 'output layer, epoch 1:' "$tmp/all.svg")"
grep -q 'gradient norm (all)' "$tmp/all.svg" || fail "--group all: colour bar not titled"
cmp -s "$tmp/one.svg" "$tmp/all.svg" && fail "--group all draws the same as attention"

# zeros and non-finite norms, and many epochs binned to at most 400 columns
{ echo "epoch,layer,group,norm"
  for e in $(seq 1 1000); do
    echo "$e,0,attention,$([ $e = 5 ] && echo inf || echo 0.5)"
    echo "$e,1,attention,$([ $e -le 3 ] && echo 0 || echo 2e-3)"
    echo "$e,2,attention,$([ $e = 7 ] && echo -nan || echo 1e+2)"
  done; } >"$tmp/long.csv"
run gradmap --log "$tmp/long.csv" --out "$tmp/long.svg"; expect_rc 0 "gradmap 1000 epochs"; no_sanitizer "1000 epochs"
wellformed "$tmp/long.svg"
cells=$(count 'class="cell"' "$tmp/long.svg")
[ "$cells" -le $((3 * 400)) ] && [ "$cells" -ge $((3 * 200)) ] || fail "1000 epochs: $cells cells, expected 3 x (200..400)"
grep -q 'class="cell"[^>]*fill="#e31a1c"' "$tmp/long.svg" || fail "inf/nan not drawn red"
# each cell's tooltip: its layer, its epochs (bins of 3 here) and the value drawn (a bin's maximum)
grep -q '<title>layer 0, epochs 1-3: max 0.5</title>' "$tmp/long.svg" || fail "no tooltip of a binned cell"
grep -q '<title>layer 0, epochs 4-6: inf or nan</title>' "$tmp/long.svg" || fail "no tooltip of an inf cell"
grep -q '<title>layer 1, epochs 1-3: 0</title>' "$tmp/long.svg" || fail "no tooltip of a zero cell"
grep -q '<title>layer 1, epochs 4-6: max 0.002</title>' "$tmp/long.svg" || fail "no tooltip of the next bin"
grep -q '<title>layer 2, epoch 1000: 100</title>' "$tmp/long.svg" || fail "no tooltip of the last bin, of one epoch"
[ "$(count '<title>' "$tmp/one.svg")" = $((L * E)) ] || fail "one log: not a tooltip a cell"
grep -q '<title>layer 0, epoch 1: [0-9.e+-]*</title>' "$tmp/one.svg" || fail "one log: no tooltip of layer 0, epoch 1"
grep -q 'class="cell"[^>]*fill="#bdbdbd"' "$tmp/long.svg" || fail "zero not drawn grey"

# a byte-order mark before the header (a spreadsheet's save) and blank lines (an editor's last
# newline): the same map, where they were refused
{ printf '\357\273\277'; sed '3{x;p;x}' "$tmp/plain.csv"; printf '\n\n'; } >"$tmp/bom.csv"
run gradmap --log "$tmp/plain.csv" --label x --out "$tmp/plain-x.svg"; expect_rc 0 "gradmap plain.csv --label x"
run gradmap --log "$tmp/bom.csv" --label x --out "$tmp/bom-x.svg"; expect_rc 0 "gradmap, a BOM and blank lines"
cmp -s "$tmp/plain-x.svg" "$tmp/bom-x.svg" || fail "a BOM and blank lines changed the map"

# bad inputs: exit 2, the file named, no crash
bad() { # NAME CONTENT(printf format)
  printf "$2" >"$tmp/$1"
  run gradmap --log "$tmp/plain.csv" --log "$tmp/$1" --out "$tmp/bad.svg"
  expect_rc 2 "gradmap on $1"
  grep -q "$1" "$tmp/err" || fail "$1: message does not name the file: $(cat "$tmp/err")"
  no_sanitizer "$1"
}
bad empty.csv ''
bad header.csv 'epoch,layer,norm\n1,0,attention,1\n'
bad header2.csv 'epoch,layer,group,norm,x\n1,0,attention,1\n'
bad nonnum.csv 'epoch,layer,group,norm\n1,0,attention,abc\n'
bad negnorm.csv 'epoch,layer,group,norm\n1,0,attention,-1\n'
bad neglayer.csv 'epoch,layer,group,norm\n1,-1,attention,1\n'
bad epoch0.csv 'epoch,layer,group,norm\n0,0,attention,1\n'
bad truncated.csv 'epoch,layer,group,norm\n1,0,attention,1\n1,1,attenti'
bad fields5.csv 'epoch,layer,group,norm\n1,0,attention,1,2\n'
bad group.csv 'epoch,layer,group,norm\n1,0,weights,1\n'
bad duplicate.csv 'epoch,layer,group,norm\n1,0,attention,1\n1,0,attention,2\n'
bad norows.csv 'epoch,layer,group,norm\n'
bad hugelayer.csv 'epoch,layer,group,norm\n1,123456789,attention,1\n'
bad emptyfield.csv 'epoch,layer,group,norm\n1,,attention,1\n'
bad nul.csv 'epoch,layer,group,norm\n1,0,attention,1\0002\n'
head -c 5000 /dev/zero | tr '\0' 'x' >"$tmp/longline.csv"; bad longline.csv "$(cat "$tmp/longline.csv")"
grep -q "truncated.csv:3" <(run gradmap --log "$tmp/truncated.csv" --out "$tmp/bad.svg"; cat "$tmp/err") ||
  fail "truncated row: line number not given"
run gradmap --log "$tmp/missing.csv" --out "$tmp/bad.svg"; expect_rc 2 "gradmap missing file"
grep -q "missing.csv" "$tmp/err" || fail "missing file not named: $(cat "$tmp/err")"
[ -e "$tmp/bad.svg" ] && fail "an SVG was written for bad input"

# bad usage
run gradmap --out "$tmp/x.svg"; expect_rc 2 "gradmap without --log"
run gradmap --log "$tmp/plain.csv"; expect_rc 2 "gradmap without --out"
run gradmap --log "$tmp/plain.csv" --out "$tmp/x.svg" --group weights; expect_rc 2 "gradmap --group weights"
run gradmap --log "$tmp/plain.csv" --out "$tmp/x.svg" --frob; expect_rc 2 "gradmap --frob"
run gradmap --log a --log b --log c --out "$tmp/x.svg"; expect_rc 2 "gradmap three logs"
run gradmap --log "$tmp/plain.csv" --out "$tmp/x.svg" --label a --label b; expect_rc 2 "gradmap two labels, one log"
run gradmap --log "$tmp/plain.csv" --out "$tmp/no/such/dir/x.svg"; expect_rc 2 "gradmap unwritable --out"

[ $fails = 0 ] && echo "gradmap: all checks passed" && exit 0
echo "$fails failure(s)"; exit 1
