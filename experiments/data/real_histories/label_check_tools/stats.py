import json, math, collections
lab={}
for l in open('sample.tsv'):
    if l.startswith('#'): continue
    s,r,x=l.rstrip('\n').split('\t'); lab[int(r)]=(s,x)
rd={}
for l in open('readings.tsv'):
    r,g,why=l.rstrip('\n').split('\t',2); assert int(r) not in rd, r; rd[int(r)]=(g,why)
assert set(rd)==set(lab), (set(lab)-set(rd), set(rd)-set(lab))
def wil(k,n,z=1.96):
    if n==0: return (0,0)
    p=k/n; d=1+z*z/n; c=(p+z*z/(2*n))/d; h=z*math.sqrt(p*(1-p)/n+z*z/(4*n*n))/d
    return c-h,c+h
out=[]
for grp,filt in [('anarchism accepted',lambda s,x:s.startswith('enwiki') and x=='accepted'),('anarchism rejected',lambda s,x:s.startswith('enwiki') and x=='rejected'),('anarchism pooled',lambda s,x:s.startswith('enwiki')),('small sources',lambda s,x:not s.startswith('enwiki')),('all 131',lambda s,x:True)]:
    c=collections.Counter()
    for r,(s,x) in lab.items():
        if filt(s,x): c[(x,rd[r][0])]+=1
    n=sum(c.values())
    agree=sum(v for (x,g),v in c.items() if (x,g) in [('accepted','kept'),('rejected','reverted')])
    ex=sum(v for (x,g),v in c.items() if g in ('rewritten','unclear'))
    a,b=wil(agree,n-ex); a2,b2=wil(agree,n)
    print(f"{grp}: n={n} {dict(c)} agree={agree}; excl rewritten/unclear {agree}/{n-ex}={agree/(n-ex):.3f} [{a:.3f},{b:.3f}]; counting them as disagreement {agree}/{n}={agree/n:.3f} [{a2:.3f},{b2:.3f}]")
with open('label_check.jsonl','w') as f:
    for r,(s,x) in lab.items():
        f.write(json.dumps(dict(source=s,revision_id=r,label=x,reading=rd[r][0],reason=rd[r][1],
          labeller="project maintainers (an AI assistant, Claude, working as the project's engineer; not independent human annotation)",
          method="read a what-happened-next view: the edit's deleted/added text, then the next N+6 revisions of the page (timestamp, user, summary, whether the edited paragraphs and the added/deleted fragments are still in the cleaned text, the share of the edit's words undone, text equal to the parent or to the edit, section diffs); reading made against the labeller's horizon N (later changes noted in the reason); the labeller's own revert id was visible in the view",
          date="2026-11-28"),ensure_ascii=False)+'\n')
