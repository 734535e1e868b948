import csv,statistics,sys
from collections import defaultdict
t=defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r['check']!='ok': print('FAIL',r); continue
    t[(r['dtype'].split('.')[0],r['case'],r['config'])].append(float(r['us']))
med={k:statistics.median(v) for k,v in t.items()}
cases=sorted(set((k[0],k[1]) for k in med))
want=sys.argv[2:] 
for c in cases:
    cfg={k[2]:v for k,v in med.items() if (k[0],k[1])==c}
    base=cfg['launch']
    top=sorted(cfg.items(), key=lambda kv:kv[1])
    line=" ".join(f"{n}:{v:.2f}" for n,v in top[:5])
    extra=" | "+" ".join(f"{w}:{cfg[w]:.2f}" for w in want if w in cfg)
    print(f"{c[0]} {c[1]:28} launch {base:7.2f} | {line}{extra}")
