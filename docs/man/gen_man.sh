#!/bin/sh
# gen_man.sh TOOL_BINARY NAME SUMMARY VERSION [DESCRIPTION.txt]: a man(7)
# page for an sprof tool on stdout, built from its --help (so the page
# never drifts from the tool) plus an optional hand-written description
# (plain paragraphs, blank-line separated). Called by sprof_tool()
# (cmake/tools.cmake) at build time.
set -eu
bin=$1 name=$2 summary=$3 version=$4 desc=${5:-}
# troff: a leading . or ' starts a request, a backslash is an escape
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
help=$("$bin" --help)
upper=$(printf '%s' "$name" | tr 'a-z' 'A-Z')
printf '.TH %s 1 "" "sprof %s" "sprof manual"\n' "$upper" "$version"
printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
printf '.SH SYNOPSIS\n.nf\n'
printf '%s\n' "$help" | grep -E '^ *(usage:|  *'"$name"' )' | sed -e 's/^ *usage: *//' -e 's/^ *//' | esc
printf '.fi\n.SH DESCRIPTION\n'
if [ -n "$desc" ] && [ -f "$desc" ]; then
    esc < "$desc" | sed -e 's/^$/.PP/'
else
    printf 'See OPTIONS.\n'
fi
printf '.SH OPTIONS\nAs printed by \\fB%s \\-\\-help\\fR:\n.PP\n.nf\n' "$name"
printf '%s\n' "$help" | esc
printf '.fi\n'
cat <<'EOT'
.SH EXIT STATUS
0 on success; 1 when an input, an output or the work failed; 2 when the
command line is wrong (an unknown option, a bad option value, a missing
operand). Every message on standard error starts with the tool's name.
sprof\-cc exits with the compiler's status.
.SH ENVIRONMENT
The sampler's variables (SPROF_OUT, SPROF_HZ, ...) are in
.BR sprof\-env (7).
.SH SEE ALSO
.BR sprof\-fold (1),
.BR sprof\-flamegraph (1),
.BR sprof\-top (1),
.BR sprof\-env (7).
The full documentation is in the sprof source tree, docs/ (docs/user\-guide.md first).
This page is generated from the tool's \-\-help at build time.
EOT
