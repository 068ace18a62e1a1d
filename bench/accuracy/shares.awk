# Leaf shares, worst error and complete-stack share of one profile of
# bench/workloads/truth, against the CPU times the program measured itself.
#   awk -f shares.awk TRUTH_OUTPUT FOLDED
# TRUTH_OUTPUT: truth's stdout ("leaf NAME NS" lines).
# FOLDED: "frame;frame;...;frame COUNT" (any order of frames; names already
#   normalised: no addresses or [inline] marks). COUNT may be a weight.
# Definitions (bench/README.md):
#   chain sample  = a stack with any level_NN or leaf_X frame
#   share(leaf)   = weight of stacks holding leaf / weight of stacks holding
#                   level_20 (so a leaf the pipeline does not name counts as 0)
#   truth(leaf)   = leaf's own CPU ns / sum over the four leaves
#   complete      = chain samples holding main or worker_main and every
#                   level above the deepest one present (level_01..level_K,
#                   no gap), K = 20 when a leaf is present; as a share of
#                   chain samples (a sample taken inside level_11 itself is
#                   complete with 11 levels)
# Prints one line: worst_pp_all worst_pp_abc complete_pct chain_weight
#   share_a share_b share_c share_d (percent)
FNR == NR {
    if ($1 == "leaf") { truth[$2] = $3; truth_sum += $3 }
    next
}
NF >= 2 {
    n = $NF
    stack = $0
    sub(/[ \t]+[0-9.]+$/, "", stack)
    k = split(stack, fr, ";")
    split("", has)
    for (i = 1; i <= k; i++) has[fr[i]] = 1
    chain = 0; deepest = 0
    for (lv = 1; lv <= 20; lv++) if (sprintf("level_%02d", lv) in has) { chain++; deepest = lv }
    leaf = ""
    for (L in truth) if (L in has) leaf = L
    if (chain == 0 && leaf == "") next
    chain_w += n
    if ("level_20" in has) {
        den += n
        if (leaf != "") got[leaf] += n
    }
    if (chain == deepest && (leaf == "" || deepest == 20) && (("main" in has) || ("worker_main" in has)))
        complete += n
}
END {
    if (truth_sum <= 0) { print "shares.awk: no ground truth in " ARGV[1] > "/dev/stderr"; exit 1 }
    worst = 0; worst3 = 0
    split("leaf_a leaf_b leaf_c leaf_d", order, " ")
    line = ""
    for (j = 1; j <= 4; j++) {
        L = order[j]
        t = 100 * truth[L] / truth_sum
        s = den > 0 ? 100 * got[L] / den : 0
        e = s - t; if (e < 0) e = -e
        if (e > worst) worst = e
        if (L != "leaf_d" && e > worst3) worst3 = e
        line = line sprintf(" %.3f", s)
    }
    pc = (chain_w > 0) ? 100 * complete / chain_w : 0
    printf "%.4f %.4f %.3f %.0f%s\n", worst, worst3, pc, chain_w, line
}
