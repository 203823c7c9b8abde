import json, collections
d=json.load(open('v_anarchism.txt.blank'))
# (id, digest, len, user, comment, ts)
empty=[i for i,x in enumerate(d) if x[2]==0]
print('empty revisions',len(empty))
restored=0; restored_next=0; never=0; by_ip=0; firstrun=0
runs=[]
i=0
for k in empty:
    if k>0 and d[k-1][2]==0: continue  # part of a run
    firstrun+=1
    pre=d[k-1][1] if k>0 else None
    j=k
    while j<len(d) and d[j][2]==0: j+=1
    if j<len(d) and d[j][1]==pre: restored_next+=1
    elif any(d[m][1]==pre for m in range(j,min(len(d),j+10))): restored+=1
    else: never+=1; runs.append((d[k][0],d[j][0] if j<len(d) else None,d[j][4][:80] if j<len(d) else ''))
print('blanking runs',firstrun,'restored by next visible rev',restored_next,'restored within 10 later',restored,'not restored exactly',never)
for r in runs[:15]: print(r)
import re
c=collections.Counter()
for k in empty:
    c['ip' if d[k][3].startswith('IP:') else 'reg']+=1
print(c)
print('---runs')
k=0; L=[]
while k<len(d):
    if d[k][2]==0:
        j=k
        while j<len(d) and d[j][2]==0: j+=1
        L.append((j-k,d[k][0],d[j-1][0],d[k][5],d[j-1][5], d[k][4][:50]))
        k=j
    else: k+=1
for x in L: print(x)
blanks=[x for x in d if x[2]==0 and re.search(r'blank',x[4],re.I)]
print('empty revs whose comment says blank',len(blanks))
rvbl=[x for x in d if re.search(r'blank',x[4],re.I)]
print('all revs with blank in comment',len(rvbl)); print([ (x[0],x[2],x[4][:60]) for x in rvbl[:20]])
small=[x for x in d if 0<x[2]<200]
print('revs with 0<len<200',len(small))
