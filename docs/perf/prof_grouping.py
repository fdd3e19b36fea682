"""The grouping stage's parts, timed: instrumentation for a scratch copy of the tree, never committed.

    git worktree add /tmp/prof HEAD && cd /tmp/prof && python3 docs/perf/prof_grouping.py
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target diaseg
    ./build/app/diaseg segment data/coffee.png -k 4,8,16 -o /tmp/w -q 2>&1 | grep PROF

Each PROF line is the seconds since the one before: g_gpb (gPb, on the device where the run has
one), g_blend (the forest's map joins it), h_watershed, h_edges (the regions' histograms and the
cracks into edges), h_specks (the merges of the regions below min_area), arcs_gather and
arcs_strengths (the base arcs' learnt strengths), h_merges_after_specks (the hierarchy's merges),
g_build (the hierarchy from g_blend on), g_hier_total and g_cluster (report.json's grouping)."""


def sub(s, old, new, count=1):
    """s with old replaced by new: an anchor the code no longer has stops the script"""
    if old not in s:
        raise SystemExit(f"prof_grouping.py: the anchor {old[:40]!r} is not in the code")
    return s.replace(old, new, count)


H = '#include <stdio.h>\nextern double dsg_seconds(void);\nstatic double prof_t;\n#define PROF(x) do { double t_ = dsg_seconds(); fprintf(stderr, "PROF %s %.5f\\n", x, t_ - prof_t); prof_t = t_; } while (0)\n'
p = 'app/lib/hierarchy.c'; s = open(p).read()
s = sub(s, 'static int learn_arcs(hier_state *s)\n{', H + 'static int learn_arcs(hier_state *s)\n{\n  PROF("h_specks");')
s = sub(s, '  if (app_arc_strengths(&in, v) != DSG_OK)\n    goto out;', '  PROF("arcs_gather");\n  if (app_arc_strengths(&in, v) != DSG_OK)\n    goto out;\n  PROF("arcs_strengths");')
s = sub(s, '  status = watershed(E, w, h, H->region, &R);', '  prof_t = dsg_seconds();\n  status = watershed(E, w, h, H->region, &R);\n  PROF("h_watershed");')
s = sub(s, "  /* merging: b's edges move", '  PROF("h_edges");\n  /* merging: b\'s edges move')
s = sub(s, "  /* each crack's level: that of the edge", '  PROF("h_merges_after_specks");\n  /* each crack\'s level: that of the edge')
open(p, 'w').write(s)
p = 'app/lib/segment.c'; s = open(p).read()
s = sub(s, 'static int build_hierarchy(dsg_problem *p, const dsg_options *opt, dsg_result *r)\n{', '#include <stdio.h>\nstatic int build_hierarchy(dsg_problem *p, const dsg_options *opt, dsg_result *r)\n{\n  double q0 = dsg_seconds();')
s = sub(s, '  /* the forest\'s map joins gPb (r\'s forest_weight', '  fprintf(stderr, "PROF g_gpb %.5f\\n", dsg_seconds() - q0); q0 = dsg_seconds();\n  /* the forest\'s map joins gPb (r\'s forest_weight')
s = sub(s, '  status =\n      app_hierarchy_build_cue(E,', '  fprintf(stderr, "PROF g_blend %.5f\\n", dsg_seconds() - q0); q0 = dsg_seconds();\n  status =\n      app_hierarchy_build_cue(E,')
s = sub(s, '    app_hierarchy_map_levels(r->hierarchy, APP_FOREST_LEVEL_HALF);\nout:', '    app_hierarchy_map_levels(r->hierarchy, APP_FOREST_LEVEL_HALF);\n  fprintf(stderr, "PROF g_build %.5f\\n", dsg_seconds() - q0);\nout:')
s = sub(s, '    status = build_hierarchy(p, opt, r);\n', '    status = build_hierarchy(p, opt, r);\n  fprintf(stderr, "PROF g_hier_total %.5f\\n", dsg_seconds() - t0);\n')
s = sub(s, '  r->timing.cluster = dsg_seconds() - t0;', '  r->timing.cluster = dsg_seconds() - t0;\n  fprintf(stderr, "PROF g_cluster %.5f\\n", r->timing.cluster);')
open(p, 'w').write(s)
