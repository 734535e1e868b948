import csv,statistics,sys,math
from collections import defaultdict
def load(p):
    t=defaultdict(list)
    for r in csv.DictReader(open(p)):
        if r['check']!='ok': continue
        t[(r['dtype'].split('.')[0],r['case'],r['config'])].append(float(r['us']))
    return {k:statistics.median(v) for k,v in t.items()}
gpus={'h100':load('h100b/x3/x3.csv'),'h200':load('h200/x3/x3.csv')}
def table(dtype, cases, kind):
    for g,med in gpus.items():
        cfgs=set(k[2] for k in med if k[0]==dtype and k[1] in cases and k[2].startswith('n.'+kind))
        res=[]
        for c in cfgs:
            rs=[]
            for case in cases:
                if (dtype,case,c) not in med: break
                best=min(v for k,v in med.items() if k[0]==dtype and k[1]==case)
                rs.append(med[(dtype,case,c)]/best)
            else:
                res.append((math.exp(sum(map(math.log,rs))/len(rs)), max(rs), c, rs))
        res.sort()
        print(f"  {g} {dtype} {kind} {cases}")
        for gm,mx,c,rs in res[:5]:
            print(f"     {c:20} geo {gm:.4f} max {mx:.4f}  " + " ".join(f"{r:.3f}" for r in rs))
        lib=[med.get((dtype,case,'launch')) for case in cases]
        print("     launch               " + " ".join(f"{l/min(v for k,v in med.items() if k[0]==dtype and k[1]==case):.3f}" for l,case in zip(lib,cases)))
for dtype,cases,kind in [
    ('int8',['Gemv/16384','Gemv/8192','llama.w2/4096x11008'],'p'),
    ('int8',['Gemv/4096','llama.w13/22016x4096','odd/4099x4112'],'p'),
    ('int8',['Gemv/1024'],'p'),
    ('int8',['GatherGemv/16384','GatherGemv/8192','mixtral.w2/2of8x4096x14336'],'g'),
    ('bf16',['Gemv/16384','Gemv/8192','llama.w2/4096x11008'],'p'),
    ('bf16',['Gemv/4096','odd/4099x4112'],'p'),
    ('bf16',['Gemv/1024'],'p'),
    ('bf16',['GatherGemv/16384','GatherGemv/8192'],'g'),
    ('bf16',['GatherGemv/4096'],'g'),
    ]:
    table(dtype,cases,kind)
