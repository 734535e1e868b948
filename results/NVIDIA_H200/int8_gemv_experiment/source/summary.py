import csv, sys, collections, statistics
t = collections.defaultdict(list); gb = collections.defaultdict(list); order = []
for r in csv.DictReader(open(sys.argv[1])):
    key = (r['case'], r['config'])
    if key not in t: order.append(key)
    t[key].append(float(r['us']) if r['check'] == 'ok' else float('nan')); gb[key].append(float(r['GBps']))
for case in dict.fromkeys(c for c, _ in order):
    base = statistics.median(t[(case, 'launch')]) if (case, 'launch') in t else None
    for c, k in order:
        if c != case: continue
        m = statistics.median(t[(c, k)])
        rel = f"{(base / m - 1) * 100:+5.1f}%" if base else ""
        print(f"{case:18s} {k:18s} {m:8.2f} us {statistics.median(gb[(c, k)]):6.0f} GB/s {rel}")
