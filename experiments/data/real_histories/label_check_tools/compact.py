import re,sys
blocks=open(sys.argv[1]).read().split('\n\n')
out=[]
for b in blocks:
    L=b.split('\n')
    if not L[0].startswith('==='): continue
    hdr=L[0]; res=[hdr[:60]+' '+re.sub(r'\(stream prev \d+\) ','',hdr[60:])[:200]]
    for l in L[1:5]: res.append(l[:330])
    rows=[];cur=None
    for l in L[5:]:
        if l.startswith('  +'):
            m=re.match(r'  \+\s*(\d+) (\d+) (\S+ \S+) (.{22}) (P \S+ A \S+ D \S+ und \S+)(.*?)\| ?(.*)',l)
            k,rid,ts,u,fl,ex,cm=m.groups()
            rows.append(dict(k=int(k),rid=rid,ts=ts,u=u.strip(),fl=fl,ex=ex.strip(),cm=cm,d=[]))
        elif l.startswith('      ') and rows:
            rows[-1]['d'].append(l.strip()[:170])
        elif l.strip(): rows.append(dict(k=0,rid='',ts='',u='',fl='',ex=l.strip(),cm='',d=[]))
    i=0
    while i<len(rows):
        r=rows[i]; j=i
        while j+1<len(rows) and rows[j+1]['fl']==r['fl'] and rows[j+1]['ex']==r['ex'] and not rows[j+1]['d'] and not re.search(r'\b(rv|revert|undid|undo|vandal|rollback)',rows[j+1]['cm'],re.I): j+=1
        if j==i:
            res.append(f"  +{r['k']} {r['rid']} {r['ts'][:10]} {r['u'][:16]} {r['fl']} {r['ex']} | {r['cm'][:80]}")
        else:
            us=sorted(set(x['u'][:12] for x in rows[i:j+1]))
            res.append(f"  +{r['k']}..+{rows[j]['k']} ({j-i+1} revs; {','.join(us)[:60]}) {r['fl']} {r['ex']}")
        for dl in r['d'][:2]: res.append('      '+dl)
        i=j+1
    out.append('\n'.join(res))
print('\n\n'.join(out))
