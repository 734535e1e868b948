import numpy as np
rng=np.random.default_rng(0)
cols=16384; T=512; per=4; vec=cols//per
def thread_elems(x):
    # element indices per thread in order: step loop, i over kVec, k over per
    idx=[]
    for t in range(T):
        l=[]
        for first in range(t, vec, T*4):
            for i in range(4):
                v=first+i*T
                if v<vec: l+= [v*per+k for k in range(per)]
        idx.append(l)
    return idx
IDX=thread_elems(None)
def tree(vals):  # float32 pairwise xor-butterfly ~ tree
    v=np.array(vals,dtype=np.float32)
    while len(v)>1: v=(v[0::2]+v[1::2]).astype(np.float32)
    return v[0]
def old(x):
    s=np.float32(x[0]); S=[];Q=[]
    for l in IDX:
        a=np.float32(0);b=np.float32(0)
        for j in l:
            d=np.float32(x[j]-s); a=np.float32(a+d); b=np.float32(np.float32(d*d)+b)
        S.append(a);Q.append(b)
    n=np.float32(cols); sm=np.float32(tree(S)/n); mean=np.float32(s+sm)
    m2=np.float32(max(tree(Q)-n*sm*sm,0)); return mean,m2
def new(x):
    M=[]
    for l in IDX:
        s=np.float32(x[l[0]]);a=np.float32(0);b=np.float32(0)
        for j in l:
            d=np.float32(x[j]-s); a=np.float32(a+d); b=np.float32(np.float32(d*d)+b)
        n=np.float32(len(l)); sm=np.float32(a/n)
        M.append((n,np.float32(s+sm),np.float32(max(b-a*sm,0))))
    def comb(A,B):
        n=np.float32(A[0]+B[0]); d=np.float32(B[1]-A[1]); w=np.float32(B[0]/n)
        return (n,np.float32(A[1]+d*w),np.float32(A[2]+B[2]+np.float32(d*d*A[0]*w)))
    while len(M)>1: M=[comb(M[i],M[i+1]) for i in range(0,len(M),2)]
    return M[0][1],M[0][2]
for first in [None, 4.0, 6.0]:
    worst_o=worst_n=0
    for r in range(4):
        x=rng.standard_normal(cols).astype(np.float32)
        if first is not None: x[0]=first
        w=rng.standard_normal(cols).astype(np.float32); b=rng.standard_normal(cols).astype(np.float32)
        xd=x.astype(np.float64); m=xd.mean(); v=((xd-m)**2).mean(); ref=(xd-m)/np.sqrt(v+1e-5)*w+b
        for name,f in [('old',old),('new',new)]:
            mean,m2=f(x); rstd=np.float32(1/np.sqrt(np.float32(m2/np.float32(cols))+np.float32(1e-5)))
            y=((x-mean)*rstd).astype(np.float32)*w+b
            err=np.max(np.abs(y-ref)/(1e-5+1.3e-6*np.abs(ref)))
            if name=='old': worst_o=max(worst_o,err)
            else: worst_n=max(worst_n,err)
    print(first, 'old worst err/tol %.2f'%worst_o, 'new %.2f'%worst_n)
