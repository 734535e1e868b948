import csv, sys, collections, statistics
t = collections.defaultdict(list)
order = []
for r in csv.DictReader(open(sys.argv[1])):
    key = (r['case'], r['config'])
    if key not in t: order.append(key)
    t[key].append(float(r['us']) if r['check'] == 'ok' else float('nan'))
for case in dict.fromkeys(c for c, _ in order):
    base = statistics.median(t[(case, 'launch')])
    print(f"{case}: launch {base:.2f} us ({' / '.join(f'{v:.2f}' for v in t[(case, 'launch')])})")
    for c, k in order:
        if c != case or k == 'launch': continue
        m = statistics.median(t[(c, k)])
        print(f"   {k:22s} {m:8.2f} us  {(base / m - 1) * 100:+5.1f}%   [{' / '.join(f'{v:.2f}' for v in t[(c, k)])}]")
